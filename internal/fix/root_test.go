package fix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

var nsSeq atomic.Int32

// labHost is a namespace of our own ("wgf-...") with a veth pair, a default
// route, a stale endpoint host route and a banIP-like ICMP limit rule, plus a
// temporary config root holding a wg-quick config for v0.
type labHost struct {
	ns   string
	root string
	env  *Env
}

const labSetup = `set -e
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip link set dev lo up
ip link add v0 type veth peer name v1
ip link set dev v0 up; ip link set dev v1 up
ip addr add 192.0.2.1/24 dev v0
ip route add default via 192.0.2.254
ip route add 46.38.233.77 via 192.0.2.9 dev v0 proto static metric 20
nft -f - <<'NFT'
table inet site {
	chain out {
		type filter hook output priority 0; policy accept;
		icmp type destination-unreachable drop
	}
}
table inet banIP {
	counter cnt_icmpflood { }
	chain pre-routing {
		type filter hook prerouting priority -150; policy accept;
		iifname "v0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over 25/second burst 5 packets counter name "cnt_icmpflood" drop
	}
}
table ip flood {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 accept
		ip protocol icmp meter icmpflood size 65535 { ip saddr limit rate over 10/second } counter drop
		udp dport 53 accept
	}
}
NFT
iptables -A OUTPUT -p icmp --icmp-type fragmentation-needed -j DROP
`

const labState = `nft list ruleset; echo ---; ip route show table all; echo ---; ip link show; echo ---; tc qdisc show; echo ---
sysctl net.core.somaxconn net.ipv4.tcp_rmem net.ipv4.tcp_congestion_control net.core.default_qdisc
ethtool -k v0 | grep -E 'udp-gro-forwarding|rx-gro-list|tx-udp-segmentation' 
cat /sys/class/net/v0/queues/rx-0/rps_cpus`

func newLabHost(t *testing.T) *labHost {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "nft", "tc", "sysctl", "iptables", "ethtool")
	ns := fmt.Sprintf("wgf-%d-%d", os.Getpid(), nsSeq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", labSetup).CombinedOutput(); err != nil {
		t.Fatalf("set up %s: %v: %s", ns, err, out)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/wireguard"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "[Interface]\nPrivateKey = cHJpdmF0ZWtleXByaXZhdGVrZXlwcml2YXRla2V5MDA=\nListenPort = 51820\n\n[Peer]\nPublicKey = cHVibGlja2V5cHVibGlja2V5cHVibGlja2V5cHViMDA=\nAllowedIPs = 10.77.0.2/32\n"
	if err := os.WriteFile(filepath.Join(root, "etc/wireguard/v0.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := Detect(context.Background(), target.Netns(ns), root)
	if err != nil {
		t.Fatal(err)
	}
	return &labHost{ns: ns, root: root, env: env}
}

// state is everything the actions may touch, as text: compare it byte for byte.
func (h *labHost) state(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", h.ns, "sh", "-c", labState).CombinedOutput()
	if err != nil {
		t.Fatalf("read state: %v: %s", err, out)
	}
	var b strings.Builder
	b.Write(out)
	var files []string
	_ = filepath.Walk(h.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.Contains(p, "/var/lib/wgperf/") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, p := range files {
		data, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		fmt.Fprintf(&b, "=== %s %v\n%s", strings.TrimPrefix(p, h.root), fi.Mode(), data)
	}
	return b.String()
}

func act(kind string, kv ...string) finding.Finding {
	return fx(finding.ID("test."+kind), "test "+kind, kind, kv...)
}

// rootActions are the kinds that run on this host's own tools in a namespace.
// uci actions have TestUCIApplyRollback; bond-hash only the plan tests, as this
// kernel has no bonding module.
func rootActions() []finding.Finding {
	return []finding.Finding{
		act(remedy.KindSysctl, "key", "net.core.somaxconn", "value", "8192"),
		act(remedy.KindSysctl, "key", "net.ipv4.tcp_rmem", "value", "4096 131072 67108864"),
		act(remedy.KindCongestion, "algorithm", "reno"),
		act(remedy.KindWGMTU, "interface", "v0", "mtu", "1380"),
		act(remedy.KindMSSClamp, "oif", "v0", "mss", "pmtu"),
		act(remedy.KindNoTrack, "interface", "v0", "port", "51820"),
		act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77:51820"),
		act(remedy.KindICMPLimit, "rate", "250", "family", "inet", "table", "banIP", "chain", "pre-routing", "handle", "4"),
		// A meter's rule cannot be replaced in place: deleted and inserted at its place.
		act(remedy.KindICMPLimit, "rate", "250", "family", "ip", "table", "flood", "chain", "input", "handle", "4", "meter", "icmpflood"),
		act(remedy.KindRPS, "device", "v0", "mask", "3"),
		act(remedy.KindTBFCap, "device", "v0", "rate", "150mbit"),
		act(remedy.KindPMTUDAllow, "icmp", "frag-needed", "family", "inet", "table", "site", "chain", "out", "handle", "2"),
		act(remedy.KindOffload, "device", "v0", "features", "rx-udp-gro-forwarding=on,rx-gro-list=off,tx-udp-segmentation=off"),
		act(remedy.KindPMTUDAllow, "icmp", "frag-needed", "backend", "iptables", "family", "ip", "table", "filter", "chain", "OUTPUT",
			"rule", "-A OUTPUT -p icmp -m icmp --icmp-type 3/4 -j DROP"),
	}
}

// rootAlternatives are actions that contradict one of rootActions (a full
// tunnel re-points the endpoint route a split tunnel deletes), so they are
// applied and rolled back one at a time only.
func rootAlternatives() []finding.Finding {
	return []finding.Finding{
		act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "via", "192.0.2.254", "dev", "v0"),
	}
}

func planFor(t *testing.T, h *labHost, fs []finding.Finding) *Plan {
	t.Helper()
	items, manual, err := Select(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(context.Background(), h.env, items, manual)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestApplyRollbackEachKind: apply changes the state, applying again changes
// nothing, rollback restores the state byte for byte.
func TestApplyRollbackEachKind(t *testing.T) {
	h := newLabHost(t)
	for _, f := range append(rootActions(), rootAlternatives()...) {
		t.Run(actionName(f), func(t *testing.T) { applyRollback(t, h, f) })
	}
}

// TestMeterLimitKeepsItsPlace: the kernel refuses to replace a rule that
// declares a meter ("Operation not supported"), so its raise deletes it and
// inserts the raised rule at its position in one transaction; the rule keeps
// its place in the chain, and the undo finds it by its meter.
func TestMeterLimitKeepsItsPlace(t *testing.T) {
	h := newLabHost(t)
	f := act(remedy.KindICMPLimit, "rate", "250", "family", "ip", "table", "flood", "chain", "input", "handle", "4", "meter", "icmpflood")
	applyRollback(t, h, f, func() {
		out, err := h.env.T.Run(context.Background(), "nft", "list", "chain", "ip", "flood", "input")
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); strings.HasSuffix(l, " accept") || strings.HasSuffix(l, " drop") {
				rules = append(rules, l)
			}
		}
		want := []string{"tcp dport 22 accept",
			"ip protocol icmp meter icmpflood size 65535 { ip saddr limit rate over 250/second burst 25 packets } counter packets 0 bytes 0 drop",
			"udp dport 53 accept"}
		if strings.Join(rules, "\n") != strings.Join(want, "\n") {
			t.Errorf("chain after the raise:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
		}
	})
}

// TestUCIApplyRollback does the same for OpenWrt's uci actions (an option set
// anew, one changed, the endpoint route with nohostroute=1) against a uci
// stand-in on PATH that keeps options in a file under the config root, with
// ifdown/ifup stand-ins that log the restarts.
func TestUCIApplyRollback(t *testing.T) {
	h := newLabHost(t)
	bin, logDir := t.TempDir(), t.TempDir()
	store := filepath.Join(h.root, "etc/config/uci-options")
	restarts := filepath.Join(logDir, "restarts")
	for name, script := range map[string]string{"uci": uciStandIn, "ifdown": restartStandIn, "ifup": restartStandIn} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(store), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, []byte("banip.global.ban_icmplimit=25\nnetwork.wg.proto=wireguard\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldPath := target.Path
	target.Path = bin + ":" + target.Path // the stand-ins, where the target finds programs
	t.Cleanup(func() { target.Path = oldPath })
	t.Setenv("UCI_OPTIONS", store)
	t.Setenv("RESTART_LOG", restarts)

	for _, tc := range []struct {
		f            finding.Finding
		key, value   string
		wantRestarts string
	}{
		{act(remedy.KindUCISet, "key", "banip.global.ban_icmplimit", "value", "250"), "banip.global.ban_icmplimit", "250", ""},
		{act(remedy.KindUCISet, "key", "network.wg.mtu", "value", "1412", "restart", "ifup:wg"), "network.wg.mtu", "1412",
			"ifdown wg\nifup wg\nifdown wg\nifup wg\n"},
		{act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77:51820", "uci_interface", "wg"), "network.wg.nohostroute", "1",
			"ifdown wg\nifup wg\nifdown wg\nifup wg\n"},
	} {
		t.Run(actionName(tc.f), func(t *testing.T) {
			_ = os.Remove(restarts)
			applyRollback(t, h, tc.f, func() {
				got, err := exec.Command(filepath.Join(bin, "uci"), "-q", "get", tc.key).Output()
				if err != nil || strings.TrimSpace(string(got)) != tc.value {
					t.Errorf("after apply: uci get %s = %q, %v; want %s", tc.key, got, err, tc.value)
				}
			})
			// Once after the change and once after its undo.
			if got, _ := os.ReadFile(restarts); string(got) != tc.wantRestarts {
				t.Errorf("restarts:\n%s\nwant:\n%s", got, tc.wantRestarts)
			}
		})
	}
}

// uciStandIn answers the uci commands the actions use, on a file of
// "config.section.option=value" lines: "-q get" exits 1 for a missing option,
// as uci does.
const uciStandIn = `#!/bin/sh
f=${UCI_OPTIONS:?}
[ "$1" = -q ] && shift
case "$1" in
get) line=$(grep -F "$2=" "$f" | grep -m1 "^$2=") || exit 1; echo "${line#*=}" ;;
set) k=${2%%=*}; { grep -v "^$k=" "$f"; echo "$2"; } | sort > "$f.new" && mv "$f.new" "$f" ;;
delete) { grep -v "^$2=" "$f"; true; } > "$f.new" && mv "$f.new" "$f" ;;
commit) ;;
*) echo "uci stand-in: unsupported: $*" >&2; exit 2 ;;
esac
`

const restartStandIn = `#!/bin/sh
echo "$(basename "$0") $*" >> "${RESTART_LOG:?}"
`

// actionName names a subtest after the action: kind/param=value,...
func actionName(f finding.Finding) string {
	a := f.Fixes[0].Action
	return a.Kind + "/" + strings.Join(sortedParams(a.Params), ",")
}

// applyRollback plans f's fix on h, applies it (then runs each check), plans it
// again to prove idempotence, rolls back and compares the state byte for byte.
func applyRollback(t *testing.T, h *labHost, f finding.Finding, checks ...func()) {
	t.Helper()
	ctx := context.Background()
	before := h.state(t)
	p := planFor(t, h, []finding.Finding{f})
	if h.state(t) != before {
		t.Fatal("planning changed the host")
	}
	if p.Pending() != 1 {
		t.Fatalf("plan says nothing to do:\n%+v", p.Items[0].Step)
	}
	j, err := Apply(ctx, h.env, p, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.State != StateApplied || j.Entries[0].Status != EntryApplied {
		t.Fatalf("journal after apply: state %s, entry %s", j.State, j.Entries[0].Status)
	}
	if h.state(t) == before {
		t.Fatal("apply changed nothing")
	}
	for _, check := range checks {
		check()
	}
	if again := planFor(t, h, []finding.Finding{f}); again.Pending() != 0 {
		t.Errorf("second plan is not empty (not idempotent): %+v", again.Items[0].Step)
	}
	if _, err := Rollback(ctx, h.env); err != nil {
		t.Fatal(err)
	}
	if after := h.state(t); after != before {
		t.Errorf("rollback did not restore the state:\n%s", lineDiffText(before, after))
	}
}

func sortedParams(p map[string]string) []string {
	var s []string
	for k, v := range p {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return s
}

func lineDiffText(a, b string) string {
	return strings.Join(lineDiff([]byte(a), []byte(b)), "\n")
}

// TestApplyAllThenRollback applies every kind in one journal and rolls back once.
func TestApplyAllThenRollback(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	p := planFor(t, h, rootActions())
	if _, err := Apply(ctx, h.env, p, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if h.state(t) == before {
		t.Fatal("apply changed nothing")
	}
	if again := planFor(t, h, rootActions()); again.Pending() != 0 {
		t.Errorf("applying the same plan twice would change %d things", again.Pending())
	}
	j, err := Rollback(ctx, h.env)
	if err != nil {
		t.Fatal(err)
	}
	if after := h.state(t); after != before {
		t.Errorf("rollback did not restore the state:\n%s", lineDiffText(before, after))
	}
	if _, err := Rollback(ctx, h.env); err == nil {
		t.Errorf("second rollback of %s: want 'no applied fix' error", j.ID)
	}
}

// TestConfirmTimeoutReverts: nobody confirms, the watchdog on the target
// reverts by itself.
func TestConfirmTimeoutReverts(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	all := rootActions()
	// Long enough that the state is read back before the watchdog fires on
	// a loaded machine (1 s failed there, beside other lab runs).
	j, err := Apply(ctx, h.env, planFor(t, h, []finding.Finding{all[0], all[4], all[6]}), ApplyOptions{Confirm: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if j.State != StateConfirming || j.WatchdogPID == 0 {
		t.Fatalf("journal: state %s, watchdog pid %d", j.State, j.WatchdogPID)
	}
	if h.state(t) == before {
		t.Fatal("apply changed nothing")
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.state(t) != before {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(h.env.journalPath(j.ID, ".revert.log"))
			t.Fatalf("not reverted 10s after the confirm deadline:\n%s\nrevert log:\n%s", lineDiffText(before, h.state(t)), log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	got, err := LoadJournal(ctx, h.env, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateRolledBack {
		t.Errorf("journal state after the watchdog: %s, want %s", got.State, StateRolledBack)
	}
	if _, err := Confirm(ctx, h.env); err == nil || !strings.Contains(err.Error(), "too late") {
		t.Errorf("confirm after the watchdog fired: got %v, want too late", err)
	}
}

// TestConfirmInTimeKeeps: a confirm stops the watchdog and the change stays.
func TestConfirmInTimeKeeps(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	all := rootActions()
	// A window a loaded machine's plan and apply fit in many times over (a
	// 2 s one expired before the confirm at a load of 16 on 2 cores).
	j, err := Apply(ctx, h.env, planFor(t, h, all[:1]), ApplyOptions{Confirm: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, h.env, planFor(t, h, all[1:2]), ApplyOptions{}); err == nil {
		t.Error("a second apply while one awaits confirmation was accepted")
	}
	if _, err := Confirm(ctx, h.env); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(j.ConfirmBy) + time.Second) // past the deadline the watchdog had
	if h.state(t) == before {
		t.Fatal("confirmed change was reverted")
	}
	if got, _ := LoadJournal(ctx, h.env, j.ID); got.State != StateConfirmed {
		t.Errorf("journal state %s, want %s", got.State, StateConfirmed)
	}
	if _, err := Rollback(ctx, h.env); err != nil {
		t.Fatal(err)
	}
	if h.state(t) != before {
		t.Error("rollback of a confirmed fix did not restore the state")
	}
}

// TestCrashThenRollback kills the applying process between two steps; a
// later rollback from the journal restores everything.
func TestCrashThenRollback(t *testing.T) {
	h := newLabHost(t)
	before := h.state(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WGF_CRASH_NS="+h.ns, "WGF_CRASH_ROOT="+h.root)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != crashExit {
		t.Fatalf("helper should have died with status %d, got %v:\n%s", crashExit, err, out)
	}
	if h.state(t) == before {
		t.Fatal("the crashed apply changed nothing")
	}
	j, err := Rollback(context.Background(), h.env)
	if err != nil {
		t.Fatal(err)
	}
	if j.Entries[1].Status != EntryReverted || j.Entries[2].Status != EntryPlanned {
		t.Errorf("entries after rollback: %s %s %s", j.Entries[0].Status, j.Entries[1].Status, j.Entries[2].Status)
	}
	if after := h.state(t); after != before {
		t.Errorf("rollback after a crash did not restore the state:\n%s", lineDiffText(before, after))
	}
}

const crashExit = 86

func TestMain(m *testing.M) {
	if ns := os.Getenv("WGF_CRASH_NS"); ns != "" {
		os.Exit(crashHelper(ns, os.Getenv("WGF_CRASH_ROOT")))
	}
	os.Exit(m.Run())
}

// crashHelper applies three steps and dies right after the second.
func crashHelper(ns, root string) int {
	ctx := context.Background()
	env, err := Detect(ctx, target.Netns(ns), root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	all := rootActions()
	items, _, err := Select([]finding.Finding{all[0], all[4], all[9]}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, err := MakePlan(ctx, env, items, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = Apply(ctx, env, p, ApplyOptions{afterStep: func(i int) {
		if i == 1 {
			os.Exit(crashExit)
		}
	}})
	fmt.Fprintln(os.Stderr, "apply returned:", err)
	return 1
}

// TestVerifyKeepsOnlyImprovements: a change whose after-figure is no better
// than before is rolled back; a better one stays.
func TestVerifyKeepsOnlyImprovements(t *testing.T) {
	h := newLabHost(t)
	ctx := context.Background()
	before := h.state(t)
	measure := func(values ...float64) Measure {
		i := 0
		return func(context.Context) (Measurement, error) {
			v := values[i]
			i++
			return Measurement{Name: "tunnel throughput", Value: v, Unit: "Mbit/s"}, nil
		}
	}
	j, err := Apply(ctx, h.env, planFor(t, h, rootActions()[:1]), ApplyOptions{Verify: measure(100, 101)})
	if err != nil {
		t.Fatal(err)
	}
	if j.Verify == nil || j.Verify.Kept || j.State != StateRolledBack {
		t.Fatalf("no improvement: verify %+v, state %s; want rolled back", j.Verify, j.State)
	}
	if h.state(t) != before {
		t.Fatal("a change that did not help was kept")
	}
	j, err = Apply(ctx, h.env, planFor(t, h, rootActions()[:1]), ApplyOptions{Verify: measure(100, 150)})
	if err != nil {
		t.Fatal(err)
	}
	if !j.Verify.Kept || j.State != StateApplied || h.state(t) == before {
		t.Fatalf("improvement: verify %+v, state %s; want kept", j.Verify, j.State)
	}
}
