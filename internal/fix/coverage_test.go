package fix

import (
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// rootTestedElsewhere are the kinds rootActions leaves out, and why.
var rootTestedElsewhere = map[string]string{
	remedy.KindWGListenPort: "applied as one with wg-peer-endpoint, never alone: the port-throttled scenario and doctor's " +
		"TestDoctorFixPortThrottledLab apply the pair to a lab's tunnel; TestBothEndsRollBackAsOne applies and rolls it back " +
		"(wg-quick files byte for byte) on a scripted wg",
	remedy.KindWGPeerEndpoint: "the other half of wg-listen-port's port move: the same tests",
	remedy.KindWGPortMove: "the near half of a port move where both ends listen on the throttled port: wg-listen-port and " +
		"wg-peer-endpoint planned as one step, whose plan golden shows both; the pair's tests apply each part",
	remedy.KindUCISet: "TestUCIApplyRollback runs uci on a stub",
	remedy.KindWGPeerKeepalive: "needs a WireGuard peer, which rootActions' dummy device has not: the nat-no-keepalive scenario " +
		"applies it through doctor --fix on a lab tunnel behind NAT, proves the far end reaches the NATed side after an idle " +
		"longer than the NAT's mapping lasts, and rolls it back",
	remedy.KindECMP: "two halves on the two ends of a tunnel, never one alone: TestFixECMPApplyScalesInMultiWANLab applies both " +
		"on a lab pair through the fix flow, measures the aggregate and rolls each end back to its exact prior state; " +
		"the ecmp scenario applies them the same way",
	remedy.KindBondHash: "no bonding module in the test kernel: the plan goldens only",
	remedy.KindIRQAffinity: "/proc/irq is the machine's, not a namespace's (a veth has no interrupt): a lab test would move " +
		"the host's own NIC interrupts; the plan goldens and remedy's TestIRQAffinityPlan on /proc/irq/38 as recorded",
	remedy.KindConntrackBuckets: "the conntrack hash is the machine's (read-only in a child namespace, where the kernel refuses " +
		"the write): a root test would resize this machine's; the plan goldens, remedy's TestConntrackBucketsPlan, and " +
		"TestKernelGlobalFixesRollBack, which applies and rolls it back in the kernel guest (lab vm)",
	remedy.KindSQM: "no cake or fq_codel in the test kernel: the plan goldens, remedy's TestSQMPlan (the refusal included) " +
		"and the bufferbloat scenario in the kernel guest (lab vm)",
}

// TestEveryKindIsCovered holds a new fix kind to the same bar as the others:
// a plan golden (TestPlanGolden) and a root apply/rollback test
// (TestApplyRollbackEachKind), or a reason in rootTestedElsewhere.
func TestEveryKindIsCovered(t *testing.T) {
	golden, root := map[string]bool{}, map[string]bool{}
	for _, fs := range [][]finding.Finding{linuxFindings(), wgQuickFindings(), openWrtFindings()} {
		for _, f := range fs {
			for _, x := range f.Fixes {
				if x.Action != nil {
					golden[x.Action.Kind] = true
				}
			}
		}
	}
	for _, f := range rootActions() {
		root[f.Fixes[0].Action.Kind] = true
	}
	for _, k := range remedy.Kinds() {
		if !golden[k] {
			t.Errorf("fix kind %s has no plan golden: add a finding of that kind to TestPlanGolden's hosts", k)
		}
		if !root[k] && rootTestedElsewhere[k] == "" {
			t.Errorf("fix kind %s has no root apply/rollback test: add it to rootActions", k)
		}
	}
	for k := range rootTestedElsewhere {
		if root[k] {
			t.Errorf("fix kind %s is in rootActions and rootTestedElsewhere", k)
		}
	}
}
