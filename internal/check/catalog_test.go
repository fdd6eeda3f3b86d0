package check

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// TestCatalog holds every entry to what the code that reads it needs: a
// valid ID in order, a title, something that reports it, its severities,
// the inputs doctor ranks and plans with, and remedies its example's fixes
// (built by the checks' own constructors) keep to.
func TestCatalog(t *testing.T) {
	if !slices.IsSortedFunc(Catalog, func(a, b Entry) int { return strings.Compare(string(a.ID), string(b.ID)) }) {
		t.Errorf("Catalog is not sorted by ID: %v", catalog.IDs())
	}
	seen := map[finding.ID]bool{}
	for _, e := range Catalog {
		if seen[e.ID] {
			t.Errorf("%s: two entries", e.ID)
		}
		seen[e.ID] = true
		if err := shell.FindingID(string(e.ID)); err != nil {
			t.Errorf("%s: %v", e.ID, err)
		}
		if e.Title == "" || strings.Contains(e.Title, "\n") {
			t.Errorf("%s: want a one-line title, got %q", e.ID, e.Title)
		}
		if e.Check == nil && e.Cross == nil && len(e.Probes) == 0 {
			t.Errorf("%s: nothing reports it (a check, a cross-host check or a probe)", e.ID)
		}
		if e.Check != nil && (len(e.Check.Doc) < 80 || e.Check.Run == nil || e.Check.ID != "") {
			t.Errorf("%s: its check needs a Doc that explains it and a Run, and takes its ID from the entry", e.ID)
		}
		if e.Cross != nil && (e.Cross.Title == "" || len(e.Cross.Doc) < 80 || e.Cross.Run == nil || e.Cross.ID != "") {
			t.Errorf("%s: its cross-host check needs a Title, a Doc and a Run, and takes its ID from the entry", e.ID)
		}
		for _, p := range e.Probes {
			if p.Kind != "probe" || p.Name == "" || len(p.Doc) < 80 {
				t.Errorf("%s: probe source %+v: want kind probe, the command and a Doc", e.ID, p)
			}
		}
		if len(e.Severities) == 0 || !slices.IsSorted(e.Severities) || len(slices.Compact(slices.Clone(e.Severities))) != len(e.Severities) {
			t.Errorf("%s: severities %v: want some, lowest first, each once", e.ID, e.Severities)
		}
		if e.Example.Host == "" || e.Example.Fixes == nil {
			t.Errorf("%s: no example", e.ID)
			continue
		}
		checkDoctor(t, e)
		kinds := remedy.Kinds()
		for _, r := range e.Remedies {
			if !slices.Contains(kinds, r.Kind) || len(r.Params) == 0 {
				t.Errorf("%s: remedy %q: not a fix kind, or no params", e.ID, r.Kind)
			}
		}
		for _, x := range e.Example.Fixes() {
			if x.Action == nil {
				continue
			}
			if err := e.Allows(*x.Action); err != nil {
				t.Errorf("%s: its example fix is not allowed: %v", e.ID, err)
			}
		}
	}
}

// checkDoctor: a cause says what it can cost, which way, whether the bench
// shows it (and the gain in words when not) and how its fix is kept; a
// symptom says none of it.
func checkDoctor(t *testing.T, e Entry) {
	t.Helper()
	d := e.Doctor
	switch d.Role {
	case catalog.Cause, catalog.Environment:
		if d.Impact <= 0 || d.Impact > 1 || d.Side == 0 || d.Bench == 0 || d.Verify == 0 {
			t.Errorf("%s: a cause needs an impact in (0, 1], a side, whether the bench shows it and how its fix is verified: %+v", e.ID, d)
		}
		if (d.Bench == catalog.NotInBench) != (d.Gain != "") {
			t.Errorf("%s: a gain in words exactly when the bench cannot show it: %+v", e.ID, d)
		}
		if d.Impact > 0.05 && !slices.ContainsFunc(e.Severities, func(s finding.Severity) bool { return s > finding.Info }) {
			t.Errorf("%s: a note (info only) costs at most 0.05, not %g", e.ID, d.Impact)
		}
	case catalog.Symptom:
		if !reflect.DeepEqual(d, catalog.Doctor{Role: catalog.Symptom, Calls: d.Calls, Load: d.Load}) {
			t.Errorf("%s: a symptom is ranked by nothing but its role: %+v", e.ID, d)
		}
	default:
		t.Errorf("%s: no role", e.ID)
	}
	if strings.ContainsAny(d.Load, "\n.;:") {
		t.Errorf("%s: Load %q: want a phrase for the middle of a sentence", e.ID, d.Load)
	}
	for _, id := range d.Underlies {
		if id == e.ID || !catalog.Has(id) {
			t.Errorf("%s: underlies %s, which is not another catalog ID", e.ID, id)
		}
	}
	if d.RefusesNewFlows && !slices.Contains(e.Severities, finding.Critical) {
		t.Errorf("%s: refuses new flows at critical severity, which it never has", e.ID)
	}
}

// inCatalog holds a finding to its catalog entry: a severity it may carry and
// fixes whose actions it may carry.
func inCatalog(t *testing.T, f finding.Finding) {
	t.Helper()
	e, ok := Lookup(f.ID)
	if !ok {
		t.Errorf("%s: not in the catalog", f.ID)
		return
	}
	if !slices.Contains(e.Severities, f.Severity) {
		t.Errorf("%s: severity %s is outside its catalog range %v", f.ID, f.Severity, e.Severities)
	}
	for _, x := range f.Fixes {
		if x.Action != nil {
			if err := e.Allows(*x.Action); err != nil {
				t.Errorf("%s: %v", f.ID, err)
			}
		}
	}
}

// Allows refuses what a findings file might ask for that the finding's own
// check would never propose: another kind, another key, a value out of
// range, a param it does not take, a required one missing.
func TestAllows(t *testing.T) {
	act := func(kind string, kv ...string) finding.Action {
		a := finding.Action{Kind: kind, Params: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			a.Params[kv[i]] = kv[i+1]
		}
		return a
	}
	for _, tc := range []struct {
		id   finding.ID
		a    finding.Action
		want string // "" allowed, else a part of the error
	}{
		{catalog.UDPRcvbufErrors, act(remedy.KindSysctl, "key", "net.core.rmem_max", "value", fmt.Sprint(udpBufferTarget)), ""},
		{catalog.UDPRcvbufErrors, act(remedy.KindSysctl, "key", "kernel.randomize_va_space", "value", "0"), `key="kernel.randomize_va_space"`},
		{catalog.UDPRcvbufErrors, act(remedy.KindSysctl, "key", "net.core.rmem_max", "value", "1"), `value="1"`},
		{catalog.UDPRcvbufErrors, act(remedy.KindUCISet, "key", "network.wg0.mtu", "value", "1"), "fixed by sysctl, not \"uci-set\""},
		{catalog.MTUPMTUDBlackhole, act(remedy.KindWGMTU, "interface", "wg0", "mtu", "1340"), ""},
		{catalog.MTUPMTUDBlackhole, act(remedy.KindWGMTU, "interface", "wg0", "mtu", "1340", "restart", "reboot"), `takes no param "restart"`},
		{catalog.MTUPMTUDBlackhole, act(remedy.KindWGMTU, "interface", "wg0"), `needs param "mtu"`},
		{catalog.MTUPMTUDBlackhole, act(remedy.KindMSSClamp, "oif", "wg0", "mss", "1300"), ""},
		{catalog.MTUPMTUDBlackhole, act(remedy.KindMSSClamp, "oif", "wg0", "mss", "pmtu"), ""},
		{catalog.TCPBuffersSmall, act(remedy.KindSysctl, "key", "net.ipv4.tcp_rmem", "value", "4096 131072 6291456"), ""},
		{catalog.TCPBuffersSmall, act(remedy.KindSysctl, "key", "net.ipv4.tcp_rmem", "value", "4096 131072 99999999999"), "want"},
		{catalog.TCPCongestionControl, act(remedy.KindCongestion, "algorithm", "anything"), `algorithm="anything"`},
		{catalog.WGUserspace, act(remedy.KindSysctl, "key", "net.core.rmem_max", "value", "1"), "has no automatic fix"},
		{"mtu.no-such", act(remedy.KindSysctl), "not in the catalog"},
	} {
		err := Allows(tc.id, tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %v: refused: %v", tc.id, tc.a, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %v: err %v, want one line with %q", tc.id, tc.a, err, tc.want)
		}
	}
}

// entryID is the ID of the catalog entry that names a check (tests run a
// check's value, which takes its ID from its entry).
func entryID(t *testing.T, names func(Entry) bool) finding.ID {
	t.Helper()
	for _, e := range Catalog {
		if names(e) {
			return e.ID
		}
	}
	t.Fatal("the check is in no catalog entry")
	return ""
}
