package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// hostilePieces are what an attacker writes into a findings file.
var hostilePieces = []string{"\n", "\r", "'", `"`, "$(", ")", "`", ";", "&", "|", "-", "#", "\\", " ", "\t",
	"\x1b[2J", "\xff", "\u2028", "touch /tmp/wgperf-pwned", "}", "WGPERF_EOF", "\n#", "-oProxyCommand=x"}

func hostileText(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(5) {
		b.WriteString(hostilePieces[r.IntN(len(hostilePieces))])
	}
	return b.String()
}

// TestFindingsFileToScriptProperty is the property test of issue 12 for
// findings files: hostile text in any field of a findings file is either
// refused on reading, or yields a --print-script that sh -n accepts and whose
// every command line is one the plan's actions rendered — never text from
// the file.
func TestFindingsFileToScriptProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	hosts := []struct {
		host func(*testing.T) *targettest.Host
		fs   func() []finding.Finding
	}{{linuxHost, linuxFindings}, {wgQuickHost, wgQuickFindings}}
	accepted, refused := 0, 0
	for i := range 300 {
		h := hosts[i%len(hosts)]
		fs := h.fs()
		f := &fs[r.IntN(len(fs))]
		evil := hostileText(r)
		switch r.IntN(8) {
		case 0:
			f.ID += finding.ID(evil)
		case 1:
			f.Host = targettest.Spec(evil)
		case 2:
			f.Title = evil
		case 3:
			f.Detail = evil
		case 4:
			f.Evidence = append(f.Evidence, finding.Evidence{Source: evil, Key: evil, Value: evil, Threshold: evil})
		case 5:
			f.Fixes[0].Description = evil
		case 6:
			f.Fixes = append(f.Fixes, finding.Fix{Description: evil, Commands: []string{evil}})
		case 7:
			if a := f.Fixes[0].Action; a != nil {
				keys := make([]string, 0, len(a.Params))
				for k := range a.Params {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if len(keys) > 0 {
					a.Params[keys[r.IntN(len(keys))]] += evil
				}
			}
		}
		doc, err := json.Marshal(map[string]any{"findings": fs})
		if err != nil {
			t.Fatal(err)
		}
		read, err := ReadFindings(bytes.NewReader(doc))
		if err != nil {
			refused++
			continue
		}
		host := h.host(t)
		read, err = ForHost(read, targettest.Spec(host.String()))
		if err != nil {
			refused++
			continue
		}
		items, manual, err := Select(read, nil)
		if err != nil {
			refused++
			continue
		}
		env, err := Detect(context.Background(), host, "/")
		if err != nil {
			t.Fatal(err)
		}
		p, err := MakePlan(context.Background(), env, items, manual)
		if err != nil {
			refused++ // the fake host has no answer for a hostile parameter
			continue
		}
		accepted++
		var script strings.Builder
		if err := p.WriteScript(&script); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sh", "-n", "-c", script.String()).CombinedOutput(); err != nil {
			t.Fatalf("case %d: sh -n: %v: %s\n%s", i, err, out, script.String())
		}
		allowed := map[string]bool{"#!/bin/sh": true, "set -eu": true, "": true}
		for _, it := range p.Items {
			var lines []string
			lines = append(lines, it.Step.Commands...)
			for _, f := range it.Step.Files {
				lines = append(lines, f.Edit...)
				lines = append(lines, "mkdir -p "+shell.Quote(remedy.Dir(f.Path)), remedy.Heredoc(f.Path, f.New))
			}
			for _, l := range lines {
				for _, part := range strings.Split(l, "\n") {
					allowed[part] = true
				}
			}
		}
		for _, l := range strings.Split(script.String(), "\n") {
			if !strings.HasPrefix(l, "#") && !allowed[l] {
				t.Fatalf("case %d: line %q is not one the actions rendered\n%s", i, l, script.String())
			}
		}
	}
	t.Logf("accepted %d, refused %d", accepted, refused)
	if accepted < 50 || refused < 50 {
		t.Errorf("accepted %d, refused %d of 300: the property is not exercised both ways", accepted, refused)
	}
}
