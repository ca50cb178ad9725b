package node

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

// ipPool hands out the node's pod addresses, 127.x.y.2 to 127.x.y.254 of its pod range.
type ipPool struct {
	mu     sync.Mutex
	prefix string // "127.x.y."
	used   map[string]bool
}

func newIPPool(podCIDR string) (*ipPool, error) {
	ip, _, err := net.ParseCIDR(podCIDR)
	if err != nil {
		return nil, fmt.Errorf("invalid pod range %q: %w", podCIDR, err)
	}
	v4 := ip.To4()
	return &ipPool{prefix: fmt.Sprintf("%d.%d.%d.", v4[0], v4[1], v4[2]), used: map[string]bool{}}, nil
}

// allocate returns want when it is free and in range (a pod keeps its address across agent
// restarts), else the first free address.
func (p *ipPool) allocate(want string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if want != "" && strings.HasPrefix(want, p.prefix) && !p.used[want] {
		p.used[want] = true
		return want
	}
	for i := 2; i < 255; i++ {
		ip := fmt.Sprintf("%s%d", p.prefix, i)
		if !p.used[ip] {
			p.used[ip] = true
			return ip
		}
	}
	// 253 pods on one node exceed what the node advertises (110); the scheduler stops first.
	return p.prefix + "254"
}

func (p *ipPool) release(ip string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, ip)
}

// insecureTransport probes servers on the pods' own loopback addresses, as the kubelet does not
// verify probe certificates either.
func insecureTransport() *http.Transport {
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec
}

func kernelVersion() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(data))
}
