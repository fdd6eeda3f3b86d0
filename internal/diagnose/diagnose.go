// Package diagnose is the driver behind "wgperf diagnose": it collects
// snapshots from live hosts in parallel (a bounded number at once, each within
// a timeout), reads saved ones, runs every check and the cross-host checks, and
// returns a Diagnosis — or, for an inventory, a Fleet that also lists
// the hosts that did not answer. The Diagnosis and its text and JSON
// renderers live here; package report only adds the HTML page.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/target"
)

// Options tune a diagnosis.
type Options struct {
	Check   check.Options
	Collect collect.Options
	// Concurrency bounds how many hosts are collected at once (0: fleet.DefaultConcurrency).
	Concurrency int
	// HostTimeout bounds the collection of one host (0: fleet.DefaultHostTimeout).
	HostTimeout time.Duration
	// Progress, when set, receives one line per host as collection starts and ends.
	Progress io.Writer
	// Limit is the inventory's --limit pattern (fleet.LoadOptions.Limit).
	Limit string
	// Warn, when set, receives the inventory's one warning line (variables
	// wgperf ignores).
	Warn io.Writer
	// SSH is how the hosts' ssh targets connect (target.HostSSH.Conns).
	SSH target.SSHConns
}

// Run diagnoses the hosts (target specs) and snapshot files together. Any host
// that cannot be reached or file that cannot be read fails the whole run with
// one line naming it: a partial diagnosis would hide the missing end.
func Run(ctx context.Context, hosts, files []string, o Options) (Diagnosis, error) {
	snaps, err := Snapshots(ctx, hosts, files, o)
	if err != nil {
		return Diagnosis{}, err
	}
	return NewDiagnosis(snaps, check.Run(snaps, o.Check)), nil
}

// Snapshots reads the files, then collects the hosts in parallel; the result
// keeps the order of files then hosts. The first host that fails fails it.
func Snapshots(ctx context.Context, hosts, files []string, o Options) ([]*facts.Snapshot, error) {
	snaps, err := readFiles(files)
	if err != nil {
		return nil, err
	}
	fh, err := fleet.Hosts(hosts)
	if err != nil {
		return nil, err
	}
	collected, err := collectEvery(ctx, fh, o)
	if err != nil {
		return nil, err
	}
	return append(snaps, collected...), nil
}

// SnapshotsOf collects the targets, already open (doctor's ends): each is
// collected as it was opened, its ssh settings kept; one that does not
// answer is an error.
func SnapshotsOf(ctx context.Context, targets []target.Target, o Options) ([]*facts.Snapshot, error) {
	fh := make([]fleet.Host, len(targets))
	for i, t := range targets {
		fh[i] = fleet.HostOf(t)
	}
	return collectEvery(ctx, fh, o)
}

// collectEvery collects the hosts; the first that does not answer is the
// error.
func collectEvery(ctx context.Context, hosts []fleet.Host, o Options) ([]*facts.Snapshot, error) {
	collected, missing, err := fleet.Collect(ctx, hosts, o.fleet())
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, errors.New(missing[0].Error)
	}
	return collected, nil
}

// Fleet is the diagnosis of an inventory: the hosts that answered, diagnosed
// together, and those that did not. Its JSON form is "wgperf diagnose
// --inventory --json": the fields of Diagnosis plus "unreachable".
type Fleet struct {
	Diagnosis
	Unreachable []fleet.Unreachable `json:"unreachable"`
}

// RunInventory diagnoses the hosts of the inventory sources at paths (files
// or directories, merged as fleet.LoadAll merges them), the extra target
// specs and the snapshot files; unreachable hosts are reported, not fatal.
func RunInventory(ctx context.Context, paths []string, extra, files []string, o Options) (*Fleet, error) {
	inv, err := fleet.LoadAll(ctx, paths, fleet.LoadOptions{Limit: o.Limit})
	if err != nil {
		return nil, err
	}
	if w := inv.Warning(); w != "" && o.Warn != nil {
		fmt.Fprintln(o.Warn, "wgperf:", w)
	}
	more, err := fleet.Hosts(extra)
	if err != nil {
		return nil, err
	}
	fl, err := RunFleet(ctx, append(inv.Hosts, more...), files, o)
	if err != nil {
		return nil, err
	}
	return &fl, nil
}

// RunFleet diagnoses the hosts of an inventory and the snapshot files. A host
// that does not answer within the host timeout is listed in Unreachable and the
// rest are diagnosed without it; the run fails only when a file cannot be read
// or no host at all (and no file) could be collected.
func RunFleet(ctx context.Context, hosts []fleet.Host, files []string, o Options) (Fleet, error) {
	snaps, err := readFiles(files)
	if err != nil {
		return Fleet{}, err
	}
	collected, missing, err := fleet.Collect(ctx, hosts, o.fleet())
	if err != nil {
		return Fleet{}, err
	}
	if len(collected) == 0 && len(snaps) == 0 {
		if len(missing) == 0 {
			return Fleet{}, errors.New("no host to diagnose")
		}
		return Fleet{}, fmt.Errorf("no host could be collected (%d unreachable); first: %s", len(missing), missing[0].Error)
	}
	snaps = append(snaps, collected...)
	if missing == nil {
		missing = []fleet.Unreachable{}
	}
	return Fleet{Diagnosis: NewDiagnosis(snaps, check.Run(snaps, o.Check)), Unreachable: missing}, nil
}

// AtLeast keeps the findings of severity min and above.
func (f Fleet) AtLeast(min finding.Severity) Fleet {
	f.Diagnosis = f.Diagnosis.AtLeast(min)
	return f
}

// WriteText renders the diagnosis as WriteText does, with the hosts that
// could not be collected and why before its closing hint.
func (f Fleet) WriteText(w io.Writer, o TextOptions) error {
	if err := writeBody(w, f.Diagnosis, o); err != nil {
		return err
	}
	if len(f.Unreachable) == 0 {
		return writeHint(w, f.Diagnosis, o)
	}
	head := fmt.Sprintf("UNREACHABLE (%d): not diagnosed, so a tunnel end may be missing from the cross-host checks", len(f.Unreachable))
	if o.Color {
		head = "\x1b[1;31m" + head + "\x1b[0m"
	}
	var b strings.Builder
	b.WriteString("\n" + head + "\n")
	for _, u := range f.Unreachable {
		name := u.Host.String()
		if u.Name != "" {
			name = u.Name + " (" + name + ")"
		}
		// The collector's error usually starts with the spec already.
		b.WriteString("  " + name + ": " + strings.TrimPrefix(u.Error, u.Host.String()+": ") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return writeHint(w, f.Diagnosis, o)
}

func (o Options) fleet() fleet.Options {
	return fleet.Options{Concurrency: o.Concurrency, HostTimeout: o.HostTimeout, Collect: o.Collect, Progress: o.Progress, SSH: o.SSH}
}

func readFiles(files []string) ([]*facts.Snapshot, error) {
	var snaps []*facts.Snapshot
	for _, path := range files {
		s, err := readFile(path)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, s)
	}
	return snaps, nil
}

func readFile(path string) (*facts.Snapshot, error) {
	f, err := openFrom(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %v", err)
	}
	defer f.Close()
	s, err := document.ReadSnapshot(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// openFrom opens a --from path; "-" is standard input.
func openFrom(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

// Target collects one host now and runs every check on it: the findings
// "wgperf fix" plans for when no file names them, and the snapshot they
// come from.
func Target(ctx context.Context, t target.Target) (*facts.Snapshot, []finding.Finding, error) {
	snap, err := collect.Collect(ctx, t, collect.Options{})
	if err != nil {
		return nil, nil, err
	}
	return snap, Findings(snap), nil
}

// Findings are what every check finds on one snapshot ("fix --from" a
// "wgperf collect" file).
func Findings(snap *facts.Snapshot) []finding.Finding {
	return check.Run([]*facts.Snapshot{snap}, check.Options{}).Findings
}
