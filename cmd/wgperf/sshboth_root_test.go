//go:build !router

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

// TestDoctorBetweenSSHHostsWithWgperf plays doctor between two ssh hosts
// that both have wgperf installed, as every packaged user has: bench then
// runs a drop sampler on each end ("wgperf drops --serve" for the whole
// bench), beside the short commands of the same ssh connection. It must
// give its verdict in its usual time, and so must it when a remote sampler
// stops answering after its first line: a bounded wait and one line saying
// so, never a hang.
func TestDoctorBetweenSSHHostsWithWgperf(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "sshboth", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}})
	exe := labtest.Binary(t)
	defer func(d time.Duration) { drops.AnswerTimeout = d }(drops.AnswerTimeout)
	drops.AnswerTimeout = 3 * time.Second
	// B's answers its status line, then nothing until its session ends.
	hangOnB := `if [ "$1 $2" = "drops --serve" ] && ip -o addr show | grep -q " ` + l.Node("b").TunnelAddr + `/"; then
	echo '{"host":"local","tier":"tracepoint","scope":"stand-in"}'
	while read -r _; do :; done
	exit 0
fi
`
	for _, c := range []struct {
		name, wrapper string
		silent        bool
	}{
		{"samplers answer", "exec " + exe + ` "$@"`, false},
		{"one sampler hangs", hangOnB + "exec " + exe + ` "$@"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "wgperf"), []byte("#!/bin/sh\n"+c.wrapper+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			specs := labtest.SSHDs(t, l, bin, "a", "b")
			var out, errOut bytes.Buffer
			done := make(chan int, 1)
			start := time.Now()
			go func() {
				done <- run([]string{"doctor", "--client", specs[0], "--server", specs[1], "--time", "1", "--json"}, &out, &errOut)
			}()
			var code int
			select {
			case code = <-done:
			case <-time.After(4 * time.Minute):
				t.Fatalf("doctor between two ssh hosts with wgperf gave no verdict in 4 minutes; it said: %s", errOut.String())
			}
			took := time.Since(start)
			t.Logf("doctor %s -> %s: exit %d in %.0f s", specs[0], specs[1], code, took.Seconds())
			if code == exitFailed {
				t.Fatalf("doctor failed: %s", errOut.String())
			}
			var doc struct {
				Status   string `json:"status"`
				Findings []struct {
					ID       string `json:"id"`
					Severity string `json:"severity"`
					Host     string `json:"host"`
					Title    string `json:"title"`
				} `json:"findings"`
				Bench struct {
					KernelDrops []drops.Status `json:"kernel_drops"`
				} `json:"bench"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("doctor --json: %v\n%s", err, out.String())
			}
			// The verdict itself is the healthy-lab tests' business (beside
			// a busy lane a healthy lab's wireguard-go may run short of CPU
			// and doctor says so); here there must be one.
			if doc.Status == "" {
				t.Errorf("doctor gave no verdict:\n%s", out.String())
			}
			t.Logf("verdict %s", doc.Status)
			for _, f := range doc.Findings {
				if f.Severity != "info" {
					t.Logf("  %s %s on %s: %s", f.Severity, f.ID, f.Host, f.Title)
				}
			}
			var lines []string
			for _, s := range doc.Bench.KernelDrops {
				lines = append(lines, s.Line())
			}
			all := strings.Join(lines, "\n")
			t.Logf("samplers:\n%s", all)
			if len(lines) != 2 {
				t.Fatalf("%d sampler statuses, want one per end", len(lines))
			}
			for _, s := range doc.Bench.KernelDrops {
				if s.Tier == drops.TierNone && strings.Contains(s.Why, "not installed") {
					t.Errorf("%s: wgperf on PATH there was not found: %s", s.Host, s.Why)
				}
			}
			if stopped := strings.Contains(all, "stopped answering"); stopped != c.silent {
				t.Errorf("a status says the sampler stopped answering: %v, want %v", stopped, c.silent)
			}
			if c.silent {
				return
			}

			// The exporter's shape: a sampler held open for the process's life,
			// and collections over the same connection beside it.
			remote, err := target.Parse(specs[1])
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := drops.ForTarget(ctx, remote)
			defer s.Close()
			if st := s.Status(); st.Tier == drops.TierNone {
				t.Fatalf("sampler on %s: %s", specs[1], st.Line())
			}
			if _, err := collect.Collect(ctx, remote, collect.Options{}); err != nil {
				t.Errorf("a collection beside the remote sampler: %v", err)
			}
			if _, err := s.Snapshot(ctx); err != nil {
				t.Errorf("snapshot after the collection: %v", err)
			}
			out.Reset()
			errOut.Reset()
			if code := run([]string{"drops", "--host", specs[1], "--duration", "1s"}, &out, &errOut); code != 0 {
				t.Errorf("wgperf drops --host %s: exit %d: %s", specs[1], code, errOut.String())
			}
		})
	}
}
