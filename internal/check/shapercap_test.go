package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

func TestShaperCapFinding(t *testing.T) {
	// wg0's shaper as tc printed it (testdata/collect/tc/qdisc-tbf-htb.json: tbf rate 150mbit).
	recorded, err := parse.ParseTCQdisc(testutil.OpenTestdata(t, "collect", "tc", "qdisc-tbf-htb.json"))
	if err != nil {
		t.Fatal(err)
	}
	tbf := recorded["wg0"]
	htb := facts.Shaper{Qdisc: "htb", RateMbit: 450, Class: "1:1"}
	cake := facts.Shaper{Qdisc: "cake", RateMbit: 40}
	link := func(sh *facts.Shaper) facts.Link { return facts.Link{Name: "wg0", Kind: "wireguard", Shaper: sh} }
	type capCase struct {
		name               string
		link               facts.Link
		tunnel, underlay   float64
		want               finding.Severity // 0: no finding
		title, fix, remedy string
	}
	tests := []capCase{
		{"the case: a 150 Mbit/s cap after the buffer fix, path 452", link(&tbf), 142, 452, finding.Critical,
			"A tbf cap on wg0 holds the tunnel's upload to 150 Mbit/s while the path carries 452", "Raise wg0's tbf cap from 150mbit to 460mbit", "tc qdisc replace dev wg0 root tbf rate 460mbit"},
		{"a cap just under the path", link(&tbf), 141, 180, finding.Warning, "", "", "tbf rate 180mbit"},
		{"a cap the path does not beat", link(&tbf), 141, 160, 0, "", "", ""},
		{"a cap the tunnel never reached (something else holds it)", link(&tbf), 60, 452, 0, "", "", ""},
		{"no shaper", link(nil), 142, 452, 0, "", "", ""},
		{"htb: its root class's rate and ceil", link(&htb), 440, 700, finding.Warning, "htb cap on wg0", "", "tc class change dev wg0 parent 1: classid 1:1 htb rate 700mbit ceil 700mbit"},
		{"cake below 100 Mbit/s: a whole Mbit/s", link(&cake), 37.5, 59.2, finding.Warning, "", "", "tc qdisc change dev wg0 root cake bandwidth 60mbit"},
		{"a qdisc collect never reads (a hand-edited snapshot)", link(&facts.Shaper{Qdisc: "\x1b]0;x", RateMbit: 10}), 9, 90, 0, "", "", ""},
		{"an htb class that is no tc handle (a hand-edited snapshot)", link(&facts.Shaper{Qdisc: "htb", RateMbit: 450, Class: "1:1 root; reboot"}), 440, 700, 0, "", "", ""},
	}
	// A's tunnel as wgperf collect read it in the lab, capped by tbf at 80
	// Mbit/s (the shaper-cap scenario at the catalog's 200), with what that
	// scenario's bench measured through it and beside it.
	lab := loadSnapshot(t, "lab-shaper-cap-a.json")
	for _, l := range lab.Links {
		if l.Shaper != nil {
			tests = append(tests, capCase{"recorded lab: tbf at 80 Mbit/s on " + l.Name, l, 77.0, 191.1, finding.Critical,
				"A tbf cap on " + l.Name + " holds the tunnel's upload to 80 Mbit/s while the path carries 191", "from 80mbit to 200mbit", "tbf rate 200mbit"})
		}
	}
	if len(tests) == 0 || tests[len(tests)-1].want != finding.Critical {
		t.Fatal("lab-shaper-cap-a.json: no shaper on any link")
	}
	for _, tt := range tests {
		f, ok := ShaperCapFinding(targettest.Spec("ssh:vps"), tt.link, "upload", tt.tunnel, tt.underlay)
		if ok != (tt.want != 0) || (ok && f.Severity != tt.want) {
			t.Errorf("%s: ok %v severity %v, want %v", tt.name, ok, f.Severity, tt.want)
			continue
		}
		if !ok {
			continue
		}
		if !strings.Contains(f.Title, tt.title) || f.Interface != tt.link.Name {
			t.Errorf("%s: title %q, interface %q: want %q", tt.name, f.Title, f.Interface, tt.title)
		}
		if len(f.Fixes) != 1 || !strings.Contains(f.Fixes[0].Description, tt.fix) || !strings.Contains(strings.Join(f.Fixes[0].Commands, "\n"), tt.remedy) {
			t.Errorf("%s: fixes %+v, want %q and %q", tt.name, f.Fixes, tt.fix, tt.remedy)
		}
		if strings.Contains(tt.name, "the case") && (f.Fixes[0].Action == nil || len(f.Evidence) != 3) {
			t.Errorf("%s: a tbf cap is raised by the tbf-cap remedy (undone to the old cap), with the cap and both runs as evidence: %+v", tt.name, f)
		}
	}
}
