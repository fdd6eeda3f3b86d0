package fix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hostileChain is a namespace of our own ("trust1-...") whose inet wgperf
// table already holds the chain an MSS clamp on v0 replaces, with one rule
// whose comment ends a here-document: whoever holds CAP_NET_ADMIN there (a
// container) can write it. Its lines after the terminator touch mark, then
// open a new document that swallows the rest of the listing, so a script
// that pasted the listing would still parse and run the touch as root.
func hostileChain(t *testing.T) (env *Env, ns, mark string) {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "nft", "sysctl")
	ns = fmt.Sprintf("trust1-%d-%d", os.Getpid(), nsSeq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	dir, err := os.MkdirTemp("", "t1") // short: an nft comment holds 128 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	mark = filepath.Join(dir, "ran")
	comment := "x\nWGPERF_EOF\ntouch " + mark + "\ncat >/dev/null <<'WGPERF_EOF'\n"
	setup := `set -e
ip link set dev lo up
ip link add v0 type veth peer name v1
ip link set dev v0 up; ip link set dev v1 up
nft -f - <<'NFT'
table inet wgperf {
	chain mss_v0 {
		meta l4proto tcp counter comment "` + comment + `"
	}
}
NFT
`
	if out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", setup).CombinedOutput(); err != nil {
		t.Fatalf("set up %s: %v: %s", ns, err, out)
	}
	env, err = Detect(context.Background(), target.Netns(ns), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return env, ns, mark
}

func listWgperf(t *testing.T, ns string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", "inet", "wgperf").CombinedOutput()
	if err != nil {
		t.Fatalf("nft list table inet wgperf: %v: %s", err, out)
	}
	return string(out)
}

// TestRuleCommentDoesNotEndTheUndo: the chain an MSS clamp replaces holds a
// rule comment with the undo's here-document terminator in it. Neither the
// confirm watchdog (nobody confirms) nor "fix rollback" runs the line after
// it, and both put the chain back as it was, comment and all.
func TestRuleCommentDoesNotEndTheUndo(t *testing.T) {
	f := act(remedy.KindMSSClamp, "oif", "v0", "mss", "pmtu")
	for _, how := range []string{"confirm expiry", "fix rollback"} {
		t.Run(how, func(t *testing.T) {
			env, ns, mark := hostileChain(t)
			ctx := context.Background()
			before := listWgperf(t, ns)
			items, manual, err := Select([]finding.Finding{f}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := MakePlan(ctx, env, items, manual)
			if err != nil {
				t.Fatal(err)
			}
			opts := ApplyOptions{}
			if how == "confirm expiry" {
				opts.Confirm = time.Second
			}
			j, err := Apply(ctx, env, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			if listWgperf(t, ns) == before {
				t.Fatal("apply changed nothing")
			}
			if how == "confirm expiry" {
				deadline := time.Now().Add(15 * time.Second)
				for {
					got, err := LoadJournal(ctx, env, j.ID)
					if err == nil && got.State == StateRolledBack {
						break
					}
					if time.Now().After(deadline) {
						log, _ := os.ReadFile(env.journalPath(j.ID, ".revert.log"))
						t.Fatalf("the watchdog did not revert 15 s after the confirm deadline (%v); revert log:\n%s", err, log)
					}
					time.Sleep(200 * time.Millisecond)
				}
			} else if _, err := Rollback(ctx, env); err != nil {
				t.Errorf("rollback: %v", err)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("%s ran the line after the terminator in a rule comment (as root, outside the namespace)", how)
			}
			if after := listWgperf(t, ns); after != before {
				t.Errorf("%s did not put the chain back:\n%s", how, lineDiffText(before, after))
			}
		})
	}
}
