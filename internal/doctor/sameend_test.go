package doctor

import (
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Both ends of the recorded lab run userspace WireGuard under the same
// rmem_max; the bench saw drops on b alone. a gets the same finding as a
// note with the same fix: once b's drops are gone and a's direction speeds
// up, a drops too (the remote-users case fixed both ends). A kernel end, an
// end with a larger limit or one already reported gets nothing.
func TestSameLimitOtherEnd(t *testing.T) {
	_, snaps := checked(t, "lab-loss3-udpbuf64k-a", "lab-loss3-udpbuf64k-b")
	a, b := snaps[0].Host, snaps[1].Host
	raise, err := remedy.Sysctl("net.core.rmem_max", "26214400")
	fix := remedy.Fixes("Raise net.core.rmem_max to 25 MiB", raise, err)
	dropped := finding.Finding{ID: catalog.UDPRcvbufErrors, Severity: finding.Warning, Host: b, Fixes: fix}
	got := sameLimitOtherEnd([]finding.Finding{dropped}, snaps)
	if len(got) != 2 || !got[1].Host.Same(a) || got[1].Severity != finding.Info || len(got[1].Fixes) != 1 || got[1].Fixes[0].Action == nil {
		t.Fatalf("findings %+v, want b's and an info on a with the same fix", got)
	}
	if v := Rank(got, measured(a.String(), b.String(), 20, 95, 85, 95)); !v[0].Finding.Host.Same(b) {
		t.Errorf("ranked %s first, want b's drops", v[0].Finding.Host)
	}
	if again := sameLimitOtherEnd(got, snaps); len(again) != 2 {
		t.Errorf("a twice: %d findings", len(again))
	}
	snaps[0].WireGuard[0].Implementation = "kernel"
	if got := sameLimitOtherEnd([]finding.Finding{dropped}, snaps); len(got) != 1 {
		t.Errorf("kernel WireGuard on a (no socket queue): %+v", got)
	}
	snaps[0].WireGuard[0].Implementation = "userspace"
	snaps[0].Sysctls["net.core.rmem_max"] = "26214400"
	if got := sameLimitOtherEnd([]finding.Finding{dropped}, snaps); len(got) != 1 {
		t.Errorf("a larger limit on a: %+v", got)
	}
}
