package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// netPartition runs cdcd in a network namespace of its own, joined to the test's namespace by a veth pair,
// and cuts that link for one service at a time with iptables rules inside the namespace: a partition as a
// network makes it, where packets are dropped without a reset or a FIN, so that only a timeout can tell.
// Only cdcd is cut off; the test's workload and consumers stay in the test's namespace.
//
// The services listen on 127.0.0.1, and Kafka's metadata names 127.0.0.1 too, so cdcd must find every
// service at its usual address inside the namespace. The kernel does that, with no process in between
// (cdcd's own sockets are the ones the partition cuts): inside the namespace a DNAT rule sends each service's
// 127.0.0.1:port over the link, and in the test's namespace a DNAT rule delivers it to 127.0.0.1:port with
// the source rewritten to 127.0.0.1, which the servers' access rules (pg_hba.conf, MariaDB's users) know.
type netPartition struct {
	t              *testing.T
	ns             string
	hostIP, peerIP string
	peerLink       string
	ports          map[string]string // service address -> its port
}

var partitionSeq atomic.Int32

// newNetPartition creates the namespace, the link and the address translation for the services at addrs
// (host:port on 127.0.0.1). Everything is removed when t ends.
func newNetPartition(t *testing.T, addrs ...string) *netPartition {
	t.Helper()
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Fatal("iptables is missing: e2e/services.sh start tools installs it")
	}
	n := partitionSeq.Add(1)
	id := fmt.Sprintf("%d%d", os.Getpid()%10000, n)
	hostLink := "cph" + id
	part := &netPartition{
		t: t, ns: "cdcd-part-" + id, peerLink: "cpn" + id, ports: map[string]string{},
		// A /30 of its own per partition.
		hostIP: fmt.Sprintf("10.201.%d.%d", os.Getpid()%250, 4*(n%60)+1),
		peerIP: fmt.Sprintf("10.201.%d.%d", os.Getpid()%250, 4*(n%60)+2),
	}
	var hostRules [][]string // the test namespace's rules, deleted when t ends
	t.Cleanup(func() {
		for _, rule := range hostRules {
			_ = exec.Command("iptables", append([]string{"-t", "nat", "-D"}, rule...)...).Run()
		}
		_ = exec.Command("ip", "link", "del", hostLink).Run() // deletes its peer too
		_ = exec.Command("ip", "netns", "del", part.ns).Run()
	})
	inNS := func(args ...string) []string { return append([]string{"ip", "netns", "exec", part.ns}, args...) }
	steps := [][]string{
		{"ip", "netns", "add", part.ns},
		{"ip", "link", "add", hostLink, "type", "veth", "peer", "name", part.peerLink},
		{"ip", "link", "set", part.peerLink, "netns", part.ns},
		{"ip", "addr", "add", part.hostIP + "/30", "dev", hostLink},
		{"ip", "link", "set", hostLink, "up"},
		// 127.0.0.1 may be routed over the link (route_localnet) at both ends.
		{"sysctl", "-qw", "net.ipv4.conf." + hostLink + ".route_localnet=1"},
		inNS("ip", "addr", "add", part.peerIP+"/30", "dev", part.peerLink),
		inNS("ip", "link", "set", part.peerLink, "up"),
		inNS("ip", "link", "set", "lo", "up"),
		inNS("sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1"),
		inNS("iptables", "-t", "nat", "-A", "POSTROUTING", "-o", part.peerLink, "-j", "MASQUERADE"),
	}
	for _, addr := range addrs {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		part.ports[addr] = port
		steps = append(steps, inNS("iptables", "-t", "nat", "-A", "OUTPUT", "-d", host, "-p", "tcp", "--dport", port,
			"-j", "DNAT", "--to-destination", net.JoinHostPort(part.hostIP, port)))
		for _, rule := range [][]string{
			{"PREROUTING", "-i", hostLink, "-p", "tcp", "--dport", port, "-j", "DNAT", "--to-destination", addr},
			{"INPUT", "-s", part.peerIP, "-p", "tcp", "--dport", port, "-j", "SNAT", "--to-source", host},
		} {
			hostRules = append(hostRules, rule)
			steps = append(steps, append([]string{"iptables", "-t", "nat", "-A"}, rule...))
		}
	}
	for _, step := range steps {
		if out, err := exec.Command(step[0], step[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	return part
}

// cut drops every packet between cdcd and the service at addr, both ways, until heal.
func (p *netPartition) cut(addr string) { p.iptables("-I", addr) }

// heal removes cut's rules.
func (p *netPartition) heal(addr string) { p.iptables("-D", addr) }

func (p *netPartition) iptables(op, addr string) {
	p.t.Helper()
	port, ok := p.ports[addr]
	if !ok {
		p.t.Fatalf("no link to %s in the partition", addr)
	}
	for _, rule := range [][]string{
		{"OUTPUT", "-o", p.peerLink, "-p", "tcp", "--dport", port, "-j", "DROP"},
		{"INPUT", "-i", p.peerLink, "-p", "tcp", "--sport", port, "-j", "DROP"},
	} {
		args := append([]string{"netns", "exec", p.ns, "iptables", op}, rule...)
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			p.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
