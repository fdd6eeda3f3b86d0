package check

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestIRQImbalance runs on a snapshot of this project's 2-CPU VM (collected
// with wgperf collect; it has no tunnel, so it is kept out of the snapshots
// every diagnose test reads): eth0 is a virtio NIC whose receive queue interrupts
// CPU 1 only (virtio2-input.0, 12774) and whose transmit queue CPU 0
// (virtio2-output.0, 10242); vsock's virtio3 rows are no NIC's.
func TestIRQImbalance(t *testing.T) {
	var vm *facts.Snapshot
	if err := json.Unmarshal(testutil.ReadTestdata(t, "collect", "irq", "vm-virtio-local.json"), &vm); err != nil {
		t.Fatal(err)
	}
	// rxHeavy is the same NIC after a long receive: the input queue's count
	// grown as a transfer grows it, everything else as recorded.
	rxHeavy := func(n uint64) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) { s.IRQs[0].PerCPU[1] = n }
	}
	kinds := func(fs []finding.Finding) string {
		var out []string
		for _, x := range fs[0].Fixes {
			if x.Action != nil {
				out = append(out, x.Action.Kind+":"+x.Action.Params["irq"]+x.Action.Params["device"]+x.Action.Params["key"]+"="+x.Action.Params["cpus"]+x.Action.Params["mask"]+x.Action.Params["value"])
			}
		}
		return strings.Join(out, " ")
	}
	runCases(t, &irqImbalance, []checkCase{
		{name: "as recorded: 23016 interrupts, split rx/tx", snap: vm},
		{name: "one receive queue on CPU 1: RPS, not affinity", snap: with(t, vm, rxHeavy(900000)), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Title != "CPU 1 took 99% of eth0's interrupts (87.9× the other CPUs' mean)" {
				t.Errorf("title %q", fs[0].Title)
			}
			if got := kinds(fs); got != "rps:eth0=3 sysctl:net.core.netdev_tstamp_prequeue=0" {
				t.Errorf("fixes %s", got)
			}
		}},
		{name: "and CPU 1 ran out of budget: a warning", snap: with(t, vm, func(s *facts.Snapshot) {
			rxHeavy(900000)(s)
			s.Softnet[1].TimeSqueeze = 40
		}), want: sev(warning)},
		{name: "RPS already on, prequeue timestamps off: nothing to offer", snap: with(t, vm, func(s *facts.Snapshot) {
			rxHeavy(900000)(s)
			findLink(s, "eth0").RPSCPUs = map[string]string{"rx-0": "3"}
			s.Sysctls["net.core.netdev_tstamp_prequeue"] = "0"
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if got := kinds(fs); got != "" || fs[0].Fixes[0].Commands[0] != "ethtool -l eth0" {
				t.Errorf("fixes %s %+v", got, fs[0].Fixes)
			}
		}},
		{name: "below 4× the other CPU", snap: with(t, vm, func(s *facts.Snapshot) {
			s.IRQs[0].PerCPU[1], s.IRQs[1].PerCPU[0] = 300000, 100000
		})},
		{name: "two queues on one CPU: the second moves", snap: with(t, vm, func(s *facts.Snapshot) {
			s.IRQs[0].PerCPU = []uint64{600000, 0}
			s.IRQs[1].PerCPU = []uint64{500000, 0}
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if got := kinds(fs); got != "irq-affinity:39=1" {
				t.Errorf("fixes %s", got)
			}
			if a := fs[0].Fixes[0].Action; a.Params["name"] != "virtio2-output.0" || fs[0].Fixes[0].Commands[0] != "echo 1 > /proc/irq/39/smp_affinity_list" {
				t.Errorf("fix %+v", fs[0].Fixes[0])
			}
		}},
		{name: "vsock's interrupts are no uplink's", snap: with(t, vm, func(s *facts.Snapshot) { s.IRQs[3].PerCPU[1] = 5000000 })},
		{name: "a queue name that is not a NIC queue's is not put in a command", snap: with(t, vm, func(s *facts.Snapshot) {
			s.IRQs[0].PerCPU = []uint64{600000, 0}
			s.IRQs[1].PerCPU = []uint64{500000, 0}
			s.IRQs[1].Name = "eth0-tx;reboot"
		}), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			if got := kinds(fs); got != "" {
				t.Errorf("fixes %s", got)
			}
		}},
	})
	_ = remedy.KindIRQAffinity
}
