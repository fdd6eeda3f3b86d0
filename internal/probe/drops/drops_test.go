//go:build !router

package drops

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKallsyms(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "kallsyms.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseKallsyms(f)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]string{
		0xffffffff82046290 + 0x1b4: "__udp4_lib_rcv",
		0xffffffff82046290:         "__udp4_lib_rcv",
		0xffffffff81e64660 + 0x10:  "__netif_receive_skb_core.constprop.0",
		0xffffffffc0a01000 + 0x40:  "wg_packet_receive",
		0x1000:                     "", // below every symbol
		0:                          "",
	} {
		if got := s.Function(addr); got != want {
			t.Errorf("Function(%#x) = %q, want %q", addr, got, want)
		}
	}
	var none *Symbols
	if none.Function(0xffffffff82046290) != "" {
		t.Error("nil Symbols resolved an address")
	}
}

func TestDeltaAndByReason(t *testing.T) {
	before := Snapshot{Counts: []Count{
		{Reason: "NO_SOCKET", Function: "__udp4_lib_rcv", Interface: "lo", Packets: 10},
		{Reason: "TCP_CLOSE", Function: "tcp_rcv_state_process", Packets: 4},
	}}
	after := Snapshot{Counts: []Count{
		{Reason: "NO_SOCKET", Function: "__udp4_lib_rcv", Interface: "lo", Packets: 12},
		{Reason: "TCP_CLOSE", Function: "tcp_rcv_state_process", Packets: 4},
		{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Packets: 900},
		{Reason: "SOCKET_RCVBUFF", Function: "udp_queue_rcv_one_skb", Packets: 100},
		{Reason: "NETFILTER_DROP", Function: "nf_hook_slow", Interface: "eth0", Packets: 7},
	}}
	got := Delta(before, after)
	want := []Count{
		{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Packets: 900},
		{Reason: "SOCKET_RCVBUFF", Function: "udp_queue_rcv_one_skb", Packets: 100},
		{Reason: "NETFILTER_DROP", Function: "nf_hook_slow", Interface: "eth0", Packets: 7},
		{Reason: "NO_SOCKET", Function: "__udp4_lib_rcv", Interface: "lo", Packets: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Delta (-want +got):\n%s", diff)
	}
	byReason := ByReason(got)
	if byReason[0] != (Count{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Packets: 1000}) {
		t.Errorf("ByReason[0] = %+v", byReason[0])
	}
	if len(byReason) != 3 {
		t.Errorf("ByReason: %d reasons, want 3", len(byReason))
	}
}

func TestParseNamespaceLink(t *testing.T) {
	if n, err := ParseNamespaceLink("net:[4026531840]\n"); err != nil || n != 4026531840 {
		t.Errorf("= %d, %v", n, err)
	}
	for _, bad := range []string{"", "net:[]", "mnt:[4026531840]", "net:[-1]", "net:[99999999999]", "net:[0]"} {
		if _, err := ParseNamespaceLink(bad); err == nil {
			t.Errorf("ParseNamespaceLink(%q) accepted", bad)
		}
	}
}

func TestStatusLine(t *testing.T) {
	for _, c := range []struct {
		s    Status
		want string
	}{
		{Status{Host: "netns:a", Tier: TierBTF, Scope: "network namespace 4026532291"}, "kernel drop reasons on netns:a: btf (network namespace 4026532291)"},
		{Status{Host: "ssh:r", Tier: TierNone, Why: "wgperf is not installed on ssh:r"}, "kernel drop reasons on ssh:r: none, counters only: wgperf is not installed on ssh:r"},
	} {
		if got := c.s.Line(); got != c.want {
			t.Errorf("Line() = %q, want %q", got, c.want)
		}
	}
}
