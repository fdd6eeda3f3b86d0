package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// evidenceOf is the evidence under key, nil when the finding has none.
func evidenceOf(f finding.Finding, key string) *finding.Evidence {
	for i := range f.Evidence {
		if f.Evidence[i].Key == key {
			return &f.Evidence[i]
		}
	}
	return nil
}

// The kernel guest (Debian's 6.1, recorded) with tcp_rmem max 6 MiB: its
// window is the buffer's share tcp_adv_win_scale leaves; golem runs 6.6,
// which ignores the setting.
func TestBuffersSmallAdvWinScale(t *testing.T) {
	guest := loadSnapshot(t, "guest-budget16-local.json")
	scale := func(n string) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) { s.Sysctls["net.ipv4.tcp_adv_win_scale"] = n }
	}
	// BDP 3.75 MB: its 6 MiB receive and 4 MiB send buffers cover it, a quarter of 6 MiB does not
	fast := Options{PathRateMbit: 1000, PathRTT: 30 * time.Millisecond}
	runCases(t, &buffersSmall, []checkCase{
		{name: "6.1 at the default 1: the buffer is judged, as before", snap: with(t, guest, scale("1")), opts: fast},
		{name: "6.1 at -2: a quarter of 6 MiB is the window", snap: with(t, guest, scale("-2")), opts: fast, want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				f := fs[0]
				if !strings.HasPrefix(f.Title, "TCP receive window maximum 1.5 MiB (1/4 of the 6 MiB buffer at tcp_adv_win_scale -2)") {
					t.Errorf("title %q", f.Title)
				}
				e := evidenceOf(f, "net.ipv4.tcp_adv_win_scale")
				if e == nil || e.Threshold != "advertised window = 1/4 of the receive buffer (kernel before 6.6)" {
					t.Errorf("evidence %+v", e)
				}
				// 3.75 MB / (1/4) = 15 MB, rounded up to a MiB: the window covers the BDP.
				if got := f.Fixes[0].Action.Params["value"]; got != "4096 131072 15728640" {
					t.Errorf("new tcp_rmem %q", got)
				}
			}},
		{name: "6.1 at 0: the whole buffer, said beside a small one", snap: with(t, guest, func(s *facts.Snapshot) {
			scale("0")(s)
			s.Sysctls["net.ipv4.tcp_rmem"] = "4096\t131072\t1048576"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if e := evidenceOf(fs[0], "net.ipv4.tcp_adv_win_scale"); e == nil || !strings.Contains(e.Threshold, "= all of the receive buffer") {
				t.Errorf("evidence %+v", e)
			}
		}},
		{name: "6.6 ignores -2: the buffer is judged, and the evidence says it is ignored", snap: with(t, guest, func(s *facts.Snapshot) {
			scale("-2")(s)
			s.System.Kernel = "6.6.73"
			s.Sysctls["net.ipv4.tcp_rmem"] = "4096\t131072\t1048576"
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			e := evidenceOf(fs[0], "net.ipv4.tcp_adv_win_scale")
			if e == nil || !strings.HasPrefix(e.Threshold, "ignored from kernel 6.6 (this one is 6.6.73)") || strings.Contains(fs[0].Title, "window") {
				t.Errorf("title %q, evidence %+v", fs[0].Title, e)
			}
		}},
		{name: "6.1 at -20: the fix stops at what the sysctl holds", snap: with(t, guest, scale("-20")), opts: fast, want: sev(warning),
			assert: func(t *testing.T, fs []finding.Finding) {
				if got := fs[0].Fixes[0].Action.Params["value"]; got != "4096 131072 2146435072" {
					t.Errorf("new tcp_rmem %q", got)
				}
			}},
		{name: "6.6 ignores -2 with a buffer that covers the BDP", snap: with(t, guest, func(s *facts.Snapshot) {
			scale("-2")(s)
			s.System.Kernel = "6.6.73"
		}), opts: fast},
	})
	for n, want := range map[int64]string{-2: "1/4", -1: "1/2", 0: "all", 1: "1/2", 2: "3/4", 3: "7/8"} {
		if got := shareWords(windowShare(n)); got != want {
			t.Errorf("tcp_adv_win_scale %d: window share %s, want %s", n, got, want)
		}
	}
}

// The kernel guest's backlog with drops: dev_weight lowered is evidence and
// a fix; at its default 64 (as recorded) or above, nothing.
func TestBacklogDropsDevWeight(t *testing.T) {
	dropping := with(t, loadSnapshot(t, "guest-budget16-local.json"), func(s *facts.Snapshot) { s.Softnet[1].Dropped = 420 })
	weight := func(w string) *facts.Snapshot {
		return with(t, dropping, func(s *facts.Snapshot) { s.Sysctls["net.core.dev_weight"] = w })
	}
	quiet := func(t *testing.T, fs []finding.Finding) {
		if evidenceOf(fs[0], "net.core.dev_weight") != nil || len(fs[0].Fixes) != 1 {
			t.Errorf("evidence %+v, fixes %+v", fs[0].Evidence, fs[0].Fixes)
		}
	}
	runCases(t, &backlogDrops, []checkCase{
		{name: "recorded: dev_weight 64", snap: dropping, want: sev(info), assert: quiet},
		{name: "raised to 128", snap: weight("128"), want: sev(info), assert: quiet},
		{name: "lowered to 16", snap: weight("16"), want: sev(info), assert: func(t *testing.T, fs []finding.Finding) {
			e := evidenceOf(fs[0], "net.core.dev_weight")
			if e == nil || e.Value != "16" || e.Threshold != ">= 64 (the default)" {
				t.Errorf("evidence %+v", e)
			}
			fix := fs[0].Fixes[len(fs[0].Fixes)-1]
			if fix.Action.Params["key"] != "net.core.dev_weight" || fix.Action.Params["value"] != "64" {
				t.Errorf("fix %+v", fix)
			}
		}},
	})
}

// golem (the multi-WAN router, recorded): 1480 entries in 16384 buckets. Its
// table filled to 90% of a 65536 maximum is a finding; entries per bucket are
// evidence on it only above 8.
func TestConntrackPressureChains(t *testing.T) {
	golem := loadSnapshot(t, "seed000-golem.json")
	filled := func(count int64) *facts.Snapshot {
		return with(t, golem, func(s *facts.Snapshot) { s.Conntrack.Count = count })
	}
	runCases(t, &conntrackTablePressure, []checkCase{
		{name: "recorded: 1480 entries, room to spare", snap: golem},
		{name: "90% full of 4 buckets' worth each: no chain evidence", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Conntrack.Count, s.Conntrack.Buckets = 58982, 16384*4
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if e := evidenceOf(fs[0], "entries per hash bucket"); e != nil {
				t.Errorf("evidence %+v", e)
			}
			if f := fixOfKind(fs[0], remedy.KindConntrackBuckets); f != nil {
				t.Errorf("the hash resized without long chains: %+v", f)
			}
		}},
		{name: "90% full, 3.6 entries per bucket", snap: filled(58982), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if e := evidenceOf(fs[0], "entries per hash bucket"); e != nil {
				t.Errorf("evidence %+v", e)
			}
		}},
		{name: "90% of a raised maximum, 9 entries per bucket", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Conntrack.Count, s.Conntrack.Max = 147456, 163840
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			e := evidenceOf(fs[0], "entries per hash bucket")
			if e == nil || e.Value != "9.0 (147456 entries, 16384 buckets)" || e.Threshold != "<= 8" {
				t.Errorf("evidence %+v", e)
			}
			// The table raised to 327680 keeps 5 per bucket in 65536 buckets.
			if f := fixOfKind(fs[0], remedy.KindConntrackBuckets); f == nil || f.Action.Params["buckets"] != "65536" {
				t.Errorf("buckets fix %+v", f)
			}
		}},
		{name: "9 entries per bucket in a network namespace: the command for the machine", snap: with(t, golem, func(s *facts.Snapshot) {
			s.Conntrack.Count, s.Conntrack.Max = 147456, 163840
			delete(s.Sysctls, "net.core.netdev_max_backlog")
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if f := fixOfKind(fs[0], remedy.KindConntrackBuckets); f != nil {
				t.Errorf("an action the namespace cannot take: %+v", f)
			}
			last := fs[0].Fixes[len(fs[0].Fixes)-1]
			if !slices.Contains(last.Commands, "sysctl -w net.netfilter.nf_conntrack_buckets=65536") || !strings.Contains(last.Description, "on the machine") {
				t.Errorf("fix %+v", last)
			}
		}},
	})
}

// fixOfKind is f's first fix whose action is of kind, nil when none.
func fixOfKind(f finding.Finding, kind string) *finding.Fix {
	for i, x := range f.Fixes {
		if x.Action != nil && x.Action.Kind == kind {
			return &f.Fixes[i]
		}
	}
	return nil
}
