package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestConntrackBucketsPlan plans the hash resize on hosts as read: the
// module's hashsize as the kernel prints it (16384 on the recorded router,
// 262144 on this machine's 6.18), in the initial network namespace (its
// netdev_max_backlog exists) or a child one, where the hash is read-only.
func TestConntrackBucketsPlan(t *testing.T) {
	host := func(hashsize string, initNetns bool) *targettest.Host {
		h := targettest.New("ssh:root@router")
		if hashsize != "" {
			h.Files[HashsizeParam] = hashsize
		}
		if initNetns {
			h.Files[initNetnsMarker] = "1000\n"
		}
		return h
	}
	plan := func(h *targettest.Host, p Platform) (Step, error) {
		return must(t)(ConntrackBuckets(65536)).Plan(context.Background(), &Env{T: h, Root: "/", Platform: p})
	}
	t.Run("raised, the undo the size read, kept in modprobe.d", func(t *testing.T) {
		st, err := plan(host("16384\n", true), Linux)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"echo 65536 > /sys/module/nf_conntrack/parameters/hashsize"}, st.Commands); d != "" {
			t.Errorf("commands (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"echo 16384 > /sys/module/nf_conntrack/parameters/hashsize"}, st.Undo); d != "" {
			t.Errorf("undo (-want +got):\n%s", d)
		}
		if len(st.Files) != 1 || st.Files[0].Path != ModprobeConf || st.Files[0].Existed ||
			!strings.HasSuffix(string(st.Files[0].New), "\noptions nf_conntrack hashsize=65536\n") {
			t.Errorf("files %+v", st.Files)
		}
		if st.Done || st.Summary != "nf_conntrack hash: 16384 -> 65536 buckets" {
			t.Errorf("step %+v", st)
		}
	})
	t.Run("OpenWrt: runtime only, says where to keep it", func(t *testing.T) {
		st, err := plan(host("16384\n", true), OpenWrt)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Files) != 0 || len(st.Commands) != 1 || !strings.Contains(strings.Join(st.Notes, " "), "/etc/modules.d/nf-conntrack") {
			t.Errorf("step %+v", st)
		}
	})
	t.Run("larger already: never shrunk", func(t *testing.T) {
		st, err := plan(host("262144\n", true), Linux)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Done || len(st.Commands)+len(st.Undo)+len(st.Files) != 0 {
			t.Errorf("step %+v", st)
		}
	})
	for _, tc := range []struct {
		name string
		h    *targettest.Host
		want string
	}{
		{"a child network namespace", host("16384\n", false), "child network namespace"},
		{"conntrack not loaded", host("", true), "not loaded"},
		{"not a number", host("16384\x1b[2J\n", true), "not a size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := plan(tc.h, Linux); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestConntrackBucketsRefusesBadSizes(t *testing.T) {
	for _, n := range []string{"0", "1000", "16777217", "-4096", "1e6", "65536; reboot", ""} {
		if r, err := Parse(finding.Action{Kind: KindConntrackBuckets, Params: map[string]string{"buckets": n}}); err == nil {
			t.Errorf("buckets %q accepted: %v", n, r.Params())
		}
	}
}
