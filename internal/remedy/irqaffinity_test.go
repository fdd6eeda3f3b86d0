package remedy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

func TestIRQAffinityConstructor(t *testing.T) {
	for _, tt := range []struct {
		irq, name, cpus string
		ok              bool
	}{
		{"38", "virtio2-input.0", "0", true},
		{"121", "mlx5_comp3@pci:0000:3b:00.0", "2-3,6", true},
		{"38", "virtio2-input.0", "0-1,", false},
		{"38", "virtio2-input.0", "all", false},
		{"3 8", "virtio2-input.0", "0", false},
		{"38", "eth0;reboot", "0", false},
		{"38", "eth0-rx-*", "0", false}, // a glob would reach other interrupts in the boot line
		{"38", "-oProxyCommand=x", "0", false},
	} {
		r, err := IRQAffinity(tt.irq, tt.name, tt.cpus)
		if (err == nil) != tt.ok {
			t.Errorf("IRQAffinity(%q, %q, %q): err %v, want ok %v", tt.irq, tt.name, tt.cpus, err, tt.ok)
			continue
		}
		if err == nil && r.Commands()[0] != "echo "+tt.cpus+" > /proc/irq/"+tt.irq+"/smp_affinity_list" {
			t.Errorf("IRQAffinity(%q, %q, %q) command %q", tt.irq, tt.name, tt.cpus, r.Commands()[0])
		}
	}
}

// The plan on this machine's virtio NIC, as /proc/irq/38 read (its receive
// queue's interrupt, allowed on CPUs 0-1).
func TestIRQAffinityPlan(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "irq", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	host := func() *targettest.Host {
		h := targettest.New("local")
		h.On("ls /proc/irq/38", read("ls-proc-irq-38.txt"))
		h.Files["/proc/irq/38/smp_affinity_list"] = read("irq-38-smp_affinity_list.txt")
		return h
	}
	r := must(t)(IRQAffinity("38", "virtio2-input.0", "1"))
	st, err := r.Plan(context.Background(), &Env{T: host(), Root: "/"})
	if err != nil {
		t.Fatal(err)
	}
	want := Step{Kind: KindIRQAffinity, Summary: "interrupt 38 (virtio2-input.0) CPUs: 0-1 -> 1",
		Notes:    []string{"runtime only, and irqbalance (where it runs) may move it back: ban it there (IRQBALANCE_ARGS=--banirq=38)"},
		Commands: []string{"echo 1 > /proc/irq/38/smp_affinity_list"}, Undo: []string{"echo 0-1 > /proc/irq/38/smp_affinity_list"}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
	// The same CPUs written another way are already in place.
	same := must(t)(IRQAffinity("38", "virtio2-input.0", "0,1"))
	if st, err := same.Plan(context.Background(), &Env{T: host(), Root: "/"}); err != nil || !st.Done || len(st.Commands) != 0 {
		t.Errorf("0,1 over 0-1: done %v, commands %q, err %v", st.Done, st.Commands, err)
	}
	// After a reboot the number may serve another device: refused.
	other := must(t)(IRQAffinity("38", "eth0-rx-0", "1"))
	if _, err := other.Plan(context.Background(), &Env{T: host(), Root: "/"}); err == nil || !strings.Contains(err.Error(), "no longer serves eth0-rx-0") {
		t.Errorf("renumbered interrupt: %v", err)
	}
}
