package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// Source is the --from FILE of "wgperf fix", read once: a "wgperf diagnose
// --json" or "wgperf doctor --json" file, or a "wgperf collect" snapshot whose checks run here. The
// hosts it names are never contacted: plans are made for the host named on
// the command line (CheckFrom, For).
type Source struct {
	Path     string
	Findings []finding.Finding
}

// ReadSource reads and parses path, refusing files over the size limits and
// findings whose fields could not have come from wgperf.
func ReadSource(path string) (*Source, error) {
	var file io.ReadCloser = io.NopCloser(os.Stdin) // "-"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %v", err)
		}
		file = f
	}
	defer file.Close()
	data, err := collect.ReadLimited(file, max(collect.MaxSnapshotBytes, MaxFindingsBytes), "--from "+path)
	if err != nil {
		return nil, err
	}
	src := &Source{Path: path}
	var probe struct {
		SchemaVersion int    `json:"schema_version"`
		Kind          string `json:"kind"` // "snapshot", or none from before collect wrote one; reports ("doctor") carry findings
	}
	if json.Unmarshal(data, &probe) == nil && probe.SchemaVersion > 0 && (probe.Kind == "" || probe.Kind == "snapshot") {
		snap, err := collect.ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", path, err)
		}
		src.Findings = check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings
		return src, nil
	}
	if src.Findings, err = ReadFindings(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("--from %s: %v", path, err)
	}
	return src, nil
}

// For returns the findings about host, and those that name no host.
func (s *Source) For(host string) ([]finding.Finding, error) {
	fs, err := ForHost(s.Findings, host)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %v", s.Path, err)
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
func PlanFindings(ctx context.Context, env *Env, fs []finding.Finding, only []finding.ID) (*Plan, error) {
	items, manual, err := Select(fs, only)
	if err != nil {
		return nil, err
	}
	return MakePlan(ctx, env, items, manual)
}
