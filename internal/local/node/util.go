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

// ipPool hands out the node's pod addresses: host 2 to 254 of its pod range, as the network
// address and the loopback address with the same host part.
type ipPool struct {
	mu       sync.Mutex
	prefix   string // "10.244.n."
	loopback string // "127.x.n."
	used     map[string]bool
}

func newIPPool(podCIDR, loopbackCIDR string) (*ipPool, error) {
	prefix, err := prefix24(podCIDR)
	if err != nil {
		return nil, err
	}
	loopback, err := prefix24(loopbackCIDR)
	if err != nil {
		return nil, err
	}
	return &ipPool{prefix: prefix, loopback: loopback, used: map[string]bool{}}, nil
}

func prefix24(cidr string) (string, error) {
	ip, _, err := net.ParseCIDR(cidr)
	if err != nil {
		return "", fmt.Errorf("invalid pod range %q: %w", cidr, err)
	}
	v4 := ip.To4()
	return fmt.Sprintf("%d.%d.%d.", v4[0], v4[1], v4[2]), nil
}

// allocate returns the loopback and network address of a pod: want when it is free and in
// range (a pod keeps its address across agent restarts), else the first free one.
func (p *ipPool) allocate(want string) (loopback, podIP string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if want == "" || !strings.HasPrefix(want, p.prefix) || p.used[want] {
		want = ""
		for i := 2; i < 255; i++ {
			if ip := fmt.Sprintf("%s%d", p.prefix, i); !p.used[ip] {
				want = ip
				break
			}
		}
		if want == "" {
			// 253 pods exceed what the node advertises (110): the scheduler stops first.
			want = p.prefix + "254"
		}
	}
	p.used[want] = true
	return p.loopback + strings.TrimPrefix(want, p.prefix), want
}

func (p *ipPool) release(podIP string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, podIP)
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
