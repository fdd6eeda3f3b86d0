package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// MaxFindingsBytes bounds a findings file: real ones are a few KiB, and a file
// from someone else must not cost a gigabyte of memory.
const MaxFindingsBytes = 64 << 20

// ReadFindings reads the findings of a "wgperf diagnose --json" file: either a
// JSON array of findings or an object with a "findings" array.
func ReadFindings(r io.Reader) ([]finding.Finding, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFindingsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFindingsBytes {
		return nil, fmt.Errorf("findings file: larger than %d MiB, refusing it", MaxFindingsBytes>>20)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("findings file: %v", err)
		}
		return decodeFindings(list)
	}
	var doc struct {
		Findings *[]json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("findings file: not JSON from wgperf diagnose --json: %v", err)
	}
	if doc.Findings == nil {
		return nil, fmt.Errorf("findings file: no \"findings\" in it (want the output of wgperf diagnose --json)")
	}
	return decodeFindings(*doc.Findings)
}

// decodeFindings reads each finding on its own, so an error (a host that is
// no target spec fails as it is read) names the finding, then checks them.
func decodeFindings(raw []json.RawMessage) ([]finding.Finding, error) {
	fs := make([]finding.Finding, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &fs[i]); err != nil {
			return nil, fmt.Errorf("findings file: finding %d: %v", i+1, err)
		}
	}
	return fs, checkFindings(fs)
}

// checkFindings refuses findings whose ID, host, interface, peer or action
// params could not have come from wgperf, and free text (titles, fix
// descriptions, by-hand commands, config lines, evidence) with a line break
// or a control character: they reach plans, scripts and terminals, where a
// newline would forge a line of the plan.
func checkFindings(fs []finding.Finding) error {
	for i, f := range fs {
		// The host, when there is one, parsed as a target spec on unmarshal.
		err := shell.FindingID(string(f.ID))
		if err == nil {
			err = shell.Line("interface", f.Interface)
		}
		if err == nil {
			err = shell.Line("peer", f.Peer)
		}
		// Action params become commands and script lines; each action checks
		// its own grammar, but none may span lines.
		for _, fx := range f.Fixes {
			if fx.Action == nil {
				continue
			}
			for k, v := range fx.Action.Params {
				if err == nil {
					err = shell.Line("param "+fx.Action.Kind+"."+k, k+"="+v)
				}
			}
		}
		if err == nil {
			err = shell.Fields(f)
		}
		if err != nil {
			return fmt.Errorf("findings file: finding %d: %v", i+1, err)
		}
	}
	// Each action only as its finding's catalog entry allows (issue 30);
	// "fix" then holds them to the target's facts too (Request.FromFile).
	if err := Admit(fs, nil); err != nil {
		return fmt.Errorf("findings file: %v", err)
	}
	return nil
}

// ForHost keeps the findings about host and those that name none. A file
// about other hosts only is an error that says how to plan for them.
func ForHost(all []finding.Finding, host target.Spec) ([]finding.Finding, error) {
	var fs []finding.Finding
	for _, x := range all {
		if x.Host.IsZero() || x.Host.Same(host) {
			fs = append(fs, x)
		}
	}
	if len(all) > 0 && len(fs) == 0 {
		return nil, fmt.Errorf("no findings for host %s: the file is about %q (to plan for it, name it with --host; wgperf then connects to it)", host, all[0].Host)
	}
	return fs, nil
}
