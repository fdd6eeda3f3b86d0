package roaming

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// recordedSamples reads B's "wg show all dump", sampled once a second in the
// lab with a clone of A ("wgperf lab up --clone-a": a2 holds A's key and
// pings B from its own uplink while A pings B too), testdata/probe/roaming.
func recordedSamples(t *testing.T) []Sample {
	t.Helper()
	start := time.Date(2026, 12, 2, 3, 50, 0, 0, time.UTC)
	var out []Sample
	for i := 1; ; i++ {
		f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "roaming", fmt.Sprintf("clone-b-%02d.txt", i)))
		if os.IsNotExist(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		wgs, err := parse.ParseWGDump(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := Sample{At: start.Add(time.Duration(i) * Every), Peers: map[string]Peer{}}
		for _, p := range wgs[0].Peers {
			s.Peers[p.PublicKey] = Peer{Endpoint: p.Endpoint, Handshake: p.LatestHandshake}
		}
		out = append(out, s)
	}
	if len(out) < 10 {
		t.Fatalf("%d samples recorded", len(out))
	}
	return out
}

// The clone's endpoint takes turns with A's: two devices share the key. The
// first five samples show one move only (A's address, then the clone's): a
// device that roamed, no finding; neither does one address throughout.
func TestFindings(t *testing.T) {
	samples := recordedSamples(t)
	fs := Findings(targettest.Spec("netns:wgl-rec2-b"), "wg-rec2-b", samples)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want one", len(fs))
	}
	f := fs[0]
	if f.ID != catalog.WGSharedKey || !strings.Contains(f.Title, "198.51.100.2:51820 and 198.18.0.2:51820") ||
		!strings.Contains(f.Evidence[0].Value, "198.51.100.2:51820 → 198.18.0.2:51820 → 198.51.100.2:51820") {
		t.Errorf("finding %s: %s; evidence %v", f.ID, f.Title, f.Evidence)
	}
	if fs := Findings(targettest.Spec("netns:wgl-rec2-b"), "wg-rec2-b", samples[:5]); len(fs) != 0 {
		t.Errorf("one move: %s", fs[0].Title)
	}
	if fs := Findings(targettest.Spec("netns:wgl-rec2-b"), "wg-rec2-b", samples[:4]); len(fs) != 0 {
		t.Errorf("one address: %s", fs[0].Title)
	}
}

func TestSequences(t *testing.T) {
	e := Endpoints{Sequence: []string{"x", "y", "x", "y"}}
	if e.Switches() != 3 || e.Returns() != 2 {
		t.Errorf("x y x y: %d switches, %d returns", e.Switches(), e.Returns())
	}
	e = Endpoints{Sequence: []string{"x", "y", "z"}}
	if e.Returns() != 0 {
		t.Errorf("x y z (a device moving on): %d returns", e.Returns())
	}
}

// A sample reads one interface's own dump ("wg show IF dump", recorded on a
// lab's B, whose lines lack the interface column "all dump" has).
func TestRead(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "roaming", "wg-show-iface-dump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	h := targettest.New("netns:wgl-rdv-b")
	h.On("wg show wg-rdv-b dump", string(b))
	s, ok := read(context.Background(), h, "wg-rdv-b")
	if !ok || len(s.Peers) != 1 {
		t.Fatalf("sample %+v, %v; want the one peer", s, ok)
	}
	for k, p := range s.Peers {
		if len(k) != 44 || p.Endpoint != "198.51.100.2:51820" {
			t.Errorf("peer %s: %+v", k, p)
		}
	}
	h.Fail("wg show wg0 dump", 1)
	if _, ok := read(context.Background(), h, "wg0"); ok {
		t.Error("a failed read made a sample")
	}
}
