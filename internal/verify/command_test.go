package verify

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/target"
)

// TestRunFixRefusesBeforeTouchingTheHost: flags that do not go together,
// and --verify with no far end to measure to, are one line naming the flag
// before the host is read or changed.
func TestRunFixRefusesBeforeTouchingTheHost(t *testing.T) {
	for _, tc := range []struct {
		c    FixCommand
		want string
	}{
		{FixCommand{Command: fix.Command{Confirm: time.Minute}}, "--confirm needs --apply"},
		{FixCommand{Measure: true}, "--verify needs --apply"},
		{FixCommand{HTML: "x.html", Command: fix.Command{Apply: true}}, "--html needs --apply --verify"},
		{FixCommand{Command: fix.Command{Apply: true, Script: true}}, "does not go with --apply"},
		{FixCommand{Command: fix.Command{Apply: true, From: "golem.json"}}, "--apply with --from needs --host"},
		{FixCommand{HostSpec: "ftp:x"}, `target "ftp:x"`},
		{FixCommand{HostSpec: "netns:hc-none", Measure: true, Command: fix.Command{Apply: true}}, "--verify needs --server: the far end of the tunnel on netns:hc-none"},
		{FixCommand{HostSpec: "netns:hc-none", Measure: true, Command: fix.Command{Apply: true},
			LabPeer: func(target.Target) (target.Target, bool) { return nil, false }}, "--verify needs --server"},
	} {
		err := RunFix(context.Background(), tc.c, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestRunECMPTakesTheLabsDefaults: in a lab, the other site is --server and
// the site's tunnel --interface; a site with no address to measure to (B)
// needs --tunnel-addr for --verify, said before anything is read.
func TestRunECMPTakesTheLabsDefaults(t *testing.T) {
	peer, err := target.Parse("netns:hc-none-a")
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	lab := func(h target.Target) ECMPSite {
		asked = h.String()
		return ECMPSite{Peer: peer, Interface: "wgl-x"}
	}
	c := ECMPCommand{HostSpec: "netns:hc-none-b", Measure: true, Lab: lab}
	c.Apply, c.Tunnels = true, 2
	err = RunECMP(context.Background(), c, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "--verify needs --tunnel-addr") || asked != "netns:hc-none-b" {
		t.Errorf("lab site B with --verify: %v (lab asked about %q)", err, asked)
	}
	c.Apply = false
	if err := RunECMP(context.Background(), c, io.Discard); err == nil || err.Error() != "--verify needs --apply (it measures before and after building the tunnels)" {
		t.Errorf("--verify without --apply: %v", err)
	}
}
