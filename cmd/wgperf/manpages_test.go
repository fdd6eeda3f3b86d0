//go:build !router

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestManPages writes the man pages as "make man" does: one per command
// (hidden ones left out), wgperf(1) with the exit codes and files, and roff
// that groff reads without a warning.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"manpages", dir}, &out, &errOut); code != exitOK {
		t.Fatalf("manpages: exit %d: %s", code, errOut.String())
	}
	var want []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page %s: %v", name, err)
			continue
		}
		page := string(b)
		if !strings.Contains(page, ".TH \""+strings.ToUpper(strings.TrimSuffix(name, ".1"))) || !strings.Contains(page, ".SH SYNOPSIS") {
			t.Errorf("%s is not a man page of its command:\n%.300s", name, page)
		}
		if strings.Contains(strings.ToLower(page), "seed 00") || strings.Contains(page, "Auto generated") {
			t.Errorf("%s cites a seed or the generator", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("%d pages for %d commands", len(entries), len(want))
	}
	for _, hidden := range []string{"wgperf-manpages.1", "wgperf-help.1"} {
		if _, err := os.Stat(filepath.Join(dir, hidden)); err == nil {
			t.Errorf("%s was written", hidden)
		}
	}
	top, err := os.ReadFile(filepath.Join(dir, "wgperf.1"))
	if err != nil {
		t.Fatal(err)
	}
	exit, files, env, see := bytes.Index(top, []byte(".SH EXIT STATUS")), bytes.Index(top, []byte(".SH FILES")),
		bytes.Index(top, []byte(".SH ENVIRONMENT")), bytes.Index(top, []byte(".SH SEE ALSO"))
	if exit < 0 || files < exit || env < files || see < env {
		t.Errorf("wgperf.1: EXIT STATUS, FILES, ENVIRONMENT and SEE ALSO are not there in that order")
	}
	// Every page points on to the tools wgperf works beside.
	for _, name := range want {
		page, _ := os.ReadFile(filepath.Join(dir, name))
		_, seeAlso, _ := bytes.Cut(page, []byte(".SH SEE ALSO\n"))
		for _, ref := range []string{"\\fBwg\\fP(8)", "\\fBwg\\-quick\\fP(8)", "\\fBiperf3\\fP(1)"} {
			if !bytes.Contains(seeAlso, []byte(ref)) {
				t.Errorf("%s: SEE ALSO lacks %s", name, ref)
			}
		}
	}
	for _, want := range []string{".TP\n\\fB3\\fP\nThe command could not run", "\\fB/etc/sysctl.d/90\\-wgperf.conf\\fP", "\\fB/var/lib/wgperf/journal\\fP",
		"nothing was judged", ".TP\n\\fBNO_COLOR\\fP\n", "\\fB/usr/share/wgperf/prometheus/alerts.yml\\fP", "\\fB/usr/share/wgperf/grafana/wgperf.json\\fP"} {
		if !bytes.Contains(top, []byte(want)) {
			t.Errorf("wgperf.1 lacks %q", want)
		}
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Log("groff not installed: the roff is not checked")
		return
	}
	for _, name := range want {
		out, err := exec.Command("groff", "-k", "-man", "-ww", "-z", filepath.Join(dir, name)).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v\n%s", name, err, out)
		}
	}
}
