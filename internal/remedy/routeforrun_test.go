package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A route held for one measurement changes the runtime route as the
// re-point fix does, with the same undo, but on OpenWrt writes no hotplug
// script: nothing of it may outlast the run.
func TestRouteForRunKeepsNothing(t *testing.T) {
	const stale = "46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20"
	for _, tc := range []struct {
		name   string
		rem    func(string, Route) (Remedy, error)
		files  bool
		prefix string
	}{
		{"re-point fix", RouteRepoint, true, "re-point"},
		{"for one run", RouteForRun, false, "route the endpoint"},
	} {
		h := targettest.New("ssh:root@golem")
		h.On("ip route show table main exact 46.38.233.77", stale+"\n")
		r, err := tc.rem("46.38.233.77", Route{Via: "192.168.254.254", Dev: "eth1"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := r.Plan(context.Background(), &Env{T: h, Root: "/", Platform: OpenWrt})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := "ip route replace table main 46.38.233.77 via 192.168.254.254 dev eth1 proto static"; len(st.Commands) != 1 || st.Commands[0] != want {
			t.Errorf("%s: commands %q, want %q", tc.name, st.Commands, want)
		}
		if len(st.Undo) != 2 || !strings.Contains(st.Undo[0], "route del") || !strings.Contains(st.Undo[1], "replace table main "+stale) {
			t.Errorf("%s: undo %q, want ours deleted and the stale route put back", tc.name, st.Undo)
		}
		if got := len(st.Files) > 0; got != tc.files {
			t.Errorf("%s: files %v, want files %v", tc.name, st.Files, tc.files)
		}
		if !strings.HasPrefix(r.Describe(), tc.prefix) {
			t.Errorf("%s: %q", tc.name, r.Describe())
		}
	}
	if _, err := RouteForRun("46.38.233.77", Route{Via: "192.0.2.1; reboot", Dev: "eth1"}); err == nil {
		t.Error("a gateway that is no address was accepted")
	}
}
