package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/internal/local/hostnet"
)

// A node reaches nothing off the bridge (offBridgeRules), but a node of a cluster that manages
// infrastructure elsewhere must reach that infrastructure, as a kind node reaches it through
// Docker's NAT: a bootstrap cluster's CAPV its vCenter, its Cluster API controllers and
// kapp-controller the new cluster's control-plane endpoint on the VM network. Those destinations
// are the node's egress (Spec.Egress). The node's init process listens for each on a port of the
// node's own address, the node's nat table sends the node's and its pods' connections to the
// destination there, and the init process dials the destination from the host's network
// namespace, whose handle it was started with: every packet of the node still ends on this host,
// which makes the connection off it on the node's behalf, and nothing else leaves.

// egressChain is the node's nat chain that sends its egress destinations to the init process.
const egressChain = "SLIPWAY-EGRESS"

// EgressPortBase is the node's port for its first egress destination; the next ones follow.
// They are on the node's bridge address, clear of Kubernetes' own ports and of NodePorts.
const EgressPortBase = 16000

// hostNetworkFD is the descriptor of the host's network namespace in a node's init process: Start
// passes it as the first extra file, past standard input, output and error.
const hostNetworkFD = 3

// egressPort is the node's port for its i-th egress destination.
func egressPort(i int) uint16 { return uint16(EgressPortBase + i) }

// CheckEgress says what is wrong with an egress destination: it must be an address and port of
// another host (a loopback address is each pod's own, and the bridge is reached directly).
func CheckEgress(d netip.AddrPort) error {
	switch {
	case !d.IsValid() || d.Port() == 0:
		return fmt.Errorf("egress destination %s is not an address and port", d)
	case !d.Addr().Is4():
		return fmt.Errorf("egress destination %s is not IPv4: the bridge is IPv4 only", d)
	case d.Addr().IsUnspecified():
		return fmt.Errorf("egress destination %s names no host: give the address of one", d)
	case d.Addr().IsLoopback():
		return fmt.Errorf("egress destination %s is on this host's loopback, which a pod cannot reach: serve it on another address of this host", d)
	case hostnet.Network.Contains(d.Addr()):
		return fmt.Errorf("egress destination %s is on the bridge %s, which every node reaches directly", d, hostnet.Network)
	}
	return nil
}

// egressRules are the node's nat rules that send each egress destination to its port of the
// node's address: in PREROUTING for its pods, in OUTPUT for the node and its host-network pods.
func egressRules(node netip.Addr, egress []netip.AddrPort) [][]string {
	rules := [][]string{{"-t", "nat", "-F", egressChain}}
	for i, d := range egress {
		rules = append(rules, []string{"-t", "nat", "-A", egressChain, "-d", d.Addr().String() + "/32", "-p", "tcp", "--dport", strconv.Itoa(int(d.Port())),
			"-m", "comment", "--comment", "slipway egress " + d.String(), "-j", "DNAT", "--to-destination", netip.AddrPortFrom(node, egressPort(i)).String()})
	}
	return rules
}

// applyEgress writes the node's egress rules, in its own network namespace; Boot runs it at
// every start, so that the rules follow the spec.
func applyEgress(node netip.Addr, egress []netip.AddrPort) error {
	iptables := func(args ...string) error {
		out, err := runCommand("iptables", append([]string{"--wait"}, args...)...)
		if err != nil {
			return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if _, err := runCommand("iptables", "--wait", "-t", "nat", "-N", egressChain); err != nil && !chainExists(egressChain) {
		return fmt.Errorf("failed to make the nat chain %s: %w", egressChain, err)
	}
	for _, chain := range []string{"PREROUTING", "OUTPUT"} {
		if _, err := runCommand("iptables", "--wait", "-t", "nat", "-C", chain, "-j", egressChain); err != nil {
			if err := iptables("-t", "nat", "-I", chain, "1", "-j", egressChain); err != nil {
				return err
			}
		}
	}
	for _, r := range egressRules(node, egress) {
		if err := iptables(r...); err != nil {
			return err
		}
	}
	return nil
}

// chainExists says whether the node's nat table has the chain.
func chainExists(chain string) bool {
	_, err := runCommand("iptables", "--wait", "-t", "nat", "-nL", chain)
	return err == nil
}

// runCommand runs a command and returns its combined output.
func runCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// forwardEgress serves the node's egress: for each destination, it accepts on the node's port
// and dials the destination from the host's network namespace (hostNet). It returns when the
// context ends.
func forwardEgress(ctx context.Context, node netip.Addr, egress []netip.AddrPort, hostNet *os.File) {
	for i, d := range egress {
		go serveEgress(ctx, netip.AddrPortFrom(node, egressPort(i)), d, hostNet)
	}
	<-ctx.Done()
}

// serveEgress accepts on listen and joins each connection to a new one to target, made from the
// host's network namespace.
func serveEgress(ctx context.Context, listen, target netip.AddrPort, hostNet *os.File) {
	log := ctrl.LoggerFrom(ctx).WithValues("egress", target.String())
	l, ok := listenUntilDone(ctx, log, func() (net.Listener, error) { return (&net.ListenConfig{}).Listen(ctx, "tcp", listen.String()) })
	if !ok {
		return
	}
	log.Info("Forwarding to the destination from the host", "listen", listen.String())
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Out of descriptors, say: the destination must not be lost for good while its
			// rule still sends connections here.
			log.Info("Cannot accept a connection; trying again", "error", err.Error())
			sleep(ctx, time.Second)
			continue
		}
		go func() {
			defer conn.Close()
			up, err := dialFrom(hostNet, target.String(), 10*time.Second)
			if err != nil {
				log.Info("Cannot reach the destination", "error", err.Error())
				return
			}
			defer up.Close()
			hostnet.Splice(ctx, conn, up)
		}()
	}
}

// dialFrom dials a TCP address from the network namespace ns. The socket is made on a thread
// that joins ns for the dial and leaves it after; a thread that cannot go back is not reused
// (it stays locked, and ends with its goroutine).
func dialFrom(ns *os.File, address string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("failed to join the host's network namespace: %w", err)}
			return
		}
		conn, err := net.DialTimeout("tcp", address, timeout)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// hostNetwork returns the host's network namespace that Start passed the init process, and keeps
// it from the processes the node starts; nil when there is none (a node started by an older
// slipway).
func hostNetwork() *os.File {
	link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", hostNetworkFD))
	if err != nil || !strings.HasPrefix(link, "net:[") {
		return nil
	}
	unix.CloseOnExec(hostNetworkFD)
	return os.NewFile(hostNetworkFD, "host-network")
}

// A pod resolves names through CoreDNS, which forwards what is not the cluster's to the node's
// resolver. A node reaches no resolver off the bridge, so a node whose egress destinations are
// named (a vCenter's FQDN) answers those names itself, with the addresses this host resolved
// them to when the node was made (Spec.EgressNames), on its own address: its resolv.conf names
// it. Any other name is refused at once, as a resolver that knows nothing of it.

// dnsTTL is the time to live of the node's answers.
const dnsTTL = 30

// serveEgressNames answers DNS queries on the node's address (UDP, port 53) for the names of its
// egress destinations until the context ends.
func serveEgressNames(ctx context.Context, node netip.Addr, names map[string][]netip.Addr) {
	log := ctrl.LoggerFrom(ctx).WithValues("service", "egress names")
	conn, ok := listenUntilDone(ctx, log, func() (net.PacketConn, error) {
		return (&net.ListenConfig{}).ListenPacket(ctx, "udp", netip.AddrPortFrom(node, 53).String())
	})
	if !ok {
		return
	}
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if reply, err := answerEgressName(buf[:n], names); err == nil {
			_, _ = conn.WriteTo(reply, from)
		}
	}
}

// answerEgressName answers one DNS query: the A records of an egress name, none (NOERROR) for
// another type of a known name, REFUSED for any other name.
func answerEgressName(query []byte, names map[string][]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	if h.Response {
		return nil, errors.New("a response, not a query")
	}
	q, err := p.Question()
	if err != nil {
		// No question to answer: a format error, at once, rather than a client's timeout.
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RCode: dnsmessage.RCodeFormatError})
		return b.Finish()
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	addrs, known := names[name]
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeRefused
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: known, RecursionDesired: h.RecursionDesired,
		RecursionAvailable: true, RCode: rcode})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET {
		for _, a := range addrs {
			rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: dnsTTL}
			if err := b.AResource(rh, dnsmessage.AResource{A: a.As4()}); err != nil {
				return nil, err
			}
		}
	}
	return b.Finish()
}
