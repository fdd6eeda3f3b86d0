//go:build linux && !router

package drops

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestLocalSamplerCountsItsNamespace sends UDP datagrams to a closed port in
// a namespace of its own: the kernel drops each with NO_SOCKET, and the
// namespace's view counts them while the host's own view does not.
// Both tiers are played: the tracepoint tier needs tracefs mounted.
func TestLocalSamplerCountsItsNamespace(t *testing.T) {
	testutil.RequireRoot(t)
	for _, tier := range []string{TierBTF, TierTracepoint} {
		t.Run(tier, func(t *testing.T) {
			k, err := OpenTier(tier)
			if err != nil {
				if testutil.InCI() && tier == TierBTF {
					t.Fatalf("no %s sampler in CI: %v", tier, err)
				}
				t.Skipf("no %s sampler here: %v", tier, err)
			}
			defer k.Close()
			countsItsNamespace(t, k)
		})
	}
}

func countsItsNamespace(t *testing.T, k *Kernel) {
	testutil.RequireTools(t, "ip", "bash", "readlink")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := fmt.Sprintf("drtest-%d", os.Getpid())
	host := target.Local()
	if _, err := host.Run(ctx, "ip", "netns", "add", name); err != nil {
		t.Fatal(err)
	}
	defer host.Run(context.Background(), "ip", "netns", "delete", name)
	ns := target.Netns(name)
	if _, err := ns.Run(ctx, "ip", "link", "set", "dev", "lo", "up"); err != nil {
		t.Fatal(err)
	}

	s, err := view(ctx, k, ns)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	own, err := view(ctx, k, host)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	t.Log(s.Status().Line())
	before, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ownBefore, _ := own.Snapshot(ctx)
	const sent = 40
	if _, err := ns.Run(ctx, "bash", "-c", fmt.Sprintf("for i in $(seq %d); do echo x >/dev/udp/127.0.0.1/9; done", sent)); err != nil {
		t.Fatal(err)
	}
	after, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ownAfter, _ := own.Snapshot(ctx)
	grown := Delta(before, after)
	t.Logf("namespace: %+v", grown)
	var noSocket uint64
	for _, c := range grown {
		if c.Reason == "NO_SOCKET" {
			noSocket += c.Packets
			if c.Function == "" {
				t.Errorf("NO_SOCKET drop without its function: %+v", c)
			}
			if c.Interface != "lo" {
				t.Errorf("NO_SOCKET drop on %q, want lo", c.Interface)
			}
		}
	}
	if noSocket < sent {
		t.Errorf("NO_SOCKET drops in the namespace = %d, want >= %d", noSocket, sent)
	}
	if s.Status().Scope != own.Status().Scope { // namespaces are told apart
		for _, c := range Delta(ownBefore, ownAfter) {
			if c.Reason == "NO_SOCKET" && c.Interface == "lo" && c.Packets >= sent {
				t.Errorf("the host's own namespace counted the other namespace's drops: %+v", c)
			}
		}
	}
}
