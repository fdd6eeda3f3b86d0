package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// Source is the --from FILE of "wgperf fix", read once: a "wgperf diagnose
// --json" file, or a "wgperf collect" snapshot whose checks run here.
type Source struct {
	Path     string
	Host     string // the one host the file is about; "" when it names none or several
	Findings []finding.Finding
}

// ReadSource reads and parses path.
func ReadSource(path string) (*Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--from: %v", err)
	}
	src := &Source{Path: path}
	var probe struct {
		SchemaVersion int `json:"schema_version"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.SchemaVersion > 0 {
		snap, err := collect.ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", path, err)
		}
		src.Host = snap.Host
		src.Findings = check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings
		return src, nil
	}
	if src.Findings, err = ReadFindings(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("--from %s: %v", path, err)
	}
	for _, x := range src.Findings {
		if x.Host != "" && src.Host != "" && x.Host != src.Host {
			src.Host = "" // several hosts: --host must choose
			break
		}
		if x.Host != "" {
			src.Host = x.Host
		}
	}
	return src, nil
}

// For returns the findings about host, and those that name no host.
func (s *Source) For(host string) ([]finding.Finding, error) {
	var fs []finding.Finding
	for _, x := range s.Findings {
		if x.Host == "" || x.Host == host {
			fs = append(fs, x)
		}
	}
	if len(s.Findings) > 0 && len(fs) == 0 {
		return nil, fmt.Errorf("--from %s: no findings for host %s (the file is about %s)", s.Path, host, s.Findings[0].Host)
	}
	return fs, nil
}

// Diagnose collects facts from t now and runs every check on them.
func Diagnose(ctx context.Context, t target.Target) ([]finding.Finding, error) {
	snap, err := collect.Collect(ctx, t, collect.Options{})
	if err != nil {
		return nil, err
	}
	return check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings, nil
}

// PlanFindings selects the fixes of fs (only the findings with those IDs when
// only is set) and plans them on env. It is the plan half of the plan→apply
// use case "wgperf fix" and "wgperf lab run" share; it changes nothing.
func PlanFindings(ctx context.Context, env *Env, fs []finding.Finding, only []string) (*Plan, error) {
	items, manual, err := Select(fs, only)
	if err != nil {
		return nil, err
	}
	return MakePlan(ctx, env, items, manual)
}
