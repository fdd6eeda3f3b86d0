package remedy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestSQMConstructor(t *testing.T) {
	for _, tt := range []struct {
		device, bandwidth string
		ok                bool
	}{
		{"eth0", "18mbit", true},
		{"wg0", "1Gbit", true},
		{"eth0", "50kbit", false}, // below what a shaper can hold steady
		{"eth0", "fast", false},
		{"-oProxyCommand=x", "18mbit", false},
		{"eth0\nreboot", "18mbit", false},
	} {
		r, err := SQM(tt.device, tt.bandwidth)
		if (err == nil) != tt.ok {
			t.Errorf("SQM(%q, %q): err %v, want ok %v", tt.device, tt.bandwidth, err, tt.ok)
			continue
		}
		if err != nil {
			continue
		}
		if got := r.Commands(); len(got) != 1 || !strings.HasPrefix(got[0], "tc qdisc replace dev "+tt.device+" root cake bandwidth ") {
			t.Errorf("SQM(%q, %q) commands %q", tt.device, tt.bandwidth, got)
		}
	}
	r := must(t)(SQM("eth0", "18mbit"))
	want := []string{"config queue 'wgperf'", "\toption enabled '1'", "\toption interface 'eth0'", "\toption download '0'",
		"\toption upload '18000'", "\toption qdisc 'cake'", "\toption script 'piece_of_cake.qos'"}
	if d := cmp.Diff(want, r.Config()[0].Lines); d != "" {
		t.Errorf("OpenWrt sqm section (-want +got):\n%s", d)
	}
	if got := r.Config()[1].Lines[1]; got != "Bandwidth=18M" {
		t.Errorf("networkd line %q", got)
	}
}

// The probe's output recorded on this machine's kernel (6.18, no module
// tree, htb built in, neither cake nor fq_codel), and what it prints on
// Debian's 6.1 (CONFIG_NET_SCH_FQ_CODEL=y, CAKE=m, HTB=m, as
// /boot/config-6.1.0-56-amd64 and its modules.dep say).
func TestParseQdiscProbe(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "qdiscs-no-cake-6.18.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, out         string
		cake, fqcodel, hb Availability
	}{
		{"no cake (recorded)", string(b), Lacks, Lacks, Has},
		{"debian 6.1", "kallsyms\nmoduletree\ncake module\nfq_codel kernel\nhtb module\n", Has, Has, Has},
		{"fq_codel only", "kallsyms\nmoduletree\nfq_codel kernel\nhtb module\n", Lacks, Has, Has},
		{"no kallsyms", "moduletree\n", Unsure, Unsure, Unsure},
	} {
		k := ParseQdiscProbe(tt.out)
		if k.Cake != tt.cake || k.FQCodel != tt.fqcodel || k.HTB != tt.hb {
			t.Errorf("%s: cake %v fq_codel %v htb %v, want %v %v %v (%s)", tt.name, k.Cake, k.FQCodel, k.HTB, tt.cake, tt.fqcodel, tt.hb, k.Evidence)
		}
	}
}

func TestSQMPlan(t *testing.T) {
	const veth = "qdisc noqueue 0: root refcnt 2 \n"
	host := func(root, probe string) *targettest.Host {
		h := targettest.New("netns:a")
		h.On("tc qdisc show dev eth0 root", root)
		h.On(shell.Join("sh", "-c", QdiscProbe), probe)
		return h
	}
	plan := func(h *targettest.Host) (Step, error) {
		return must(t)(SQM("eth0", "18mbit")).Plan(context.Background(), &Env{T: h, Root: "/", Platform: Linux, Kernel: "6.18.44"})
	}
	t.Run("cake", func(t *testing.T) {
		st, err := plan(host(veth, "kallsyms\nmoduletree\ncake module\nfq_codel kernel\nhtb module\n"))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"tc qdisc replace dev eth0 root cake bandwidth 18mbit"}, st.Commands); d != "" {
			t.Errorf("commands (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"tc qdisc del dev eth0 root"}, st.Undo); d != "" {
			t.Errorf("undo (-want +got):\n%s", d)
		}
	})
	t.Run("htb and fq_codel, a tbf saved", func(t *testing.T) {
		st, err := plan(host("qdisc tbf 8003: root refcnt 3 rate 20Mbit burst 64Kb lat 500ms \n", "kallsyms\nmoduletree\nfq_codel kernel\nhtb module\n"))
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Commands) != 3 || !strings.Contains(st.Commands[1], "htb rate 18mbit ceil 18mbit") || !strings.HasSuffix(st.Commands[2], "fq_codel") {
			t.Errorf("commands %q", st.Commands)
		}
		if d := cmp.Diff([]string{"tc qdisc replace dev eth0 root tbf rate 20Mbit burst 64Kb lat 500ms"}, st.Undo); d != "" {
			t.Errorf("undo (-want +got):\n%s", d)
		}
	})
	t.Run("neither: says so", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("testdata", "qdiscs-no-cake-6.18.txt"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = plan(host(veth, string(b)))
		if err == nil || !strings.Contains(err.Error(), "cake/fq_codel not available on this kernel (6.18.44: no cake built in") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("already", func(t *testing.T) {
		st, err := plan(host("qdisc cake 8005: root refcnt 2 bandwidth 18Mbit diffserv3 triple-isolate rtt 100ms raw overhead 0 \n", ""))
		if err != nil || !st.Done {
			t.Errorf("done %v, err %v", st.Done, err)
		}
	})
	t.Run("a configured htb is left alone", func(t *testing.T) {
		_, err := plan(host("qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000\n", ""))
		if err == nil || !strings.Contains(err.Error(), "already has a configured root qdisc (htb 1:)") {
			t.Errorf("err %v", err)
		}
	})
}
