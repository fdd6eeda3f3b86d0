// Package diagnose is the driver behind "wgperf diagnose": it collects
// snapshots from live hosts in parallel, reads saved ones, runs every check and
// the cross-host checks, and returns a report.Diagnosis.
package diagnose

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

// Options tune a diagnosis.
type Options struct {
	Check   check.Options
	Collect collect.Options
	// Progress, when set, receives one line per host as collection starts and ends.
	Progress io.Writer
}

// Run diagnoses the hosts (target specs) and snapshot files together. Any host
// that cannot be reached or file that cannot be read fails the whole run with
// one line naming it: a partial diagnosis would hide the missing end.
func Run(ctx context.Context, hosts, files []string, o Options) (report.Diagnosis, error) {
	snaps, err := Snapshots(ctx, hosts, files, o)
	if err != nil {
		return report.Diagnosis{}, err
	}
	return report.NewDiagnosis(snaps, check.Run(snaps, o.Check)), nil
}

// Snapshots reads the files, then collects the hosts in parallel; the result
// keeps the order of files then hosts.
func Snapshots(ctx context.Context, hosts, files []string, o Options) ([]*facts.Snapshot, error) {
	var snaps []*facts.Snapshot
	for _, path := range files {
		s, err := readFile(path)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, s)
	}
	targets := make([]target.Target, len(hosts))
	for i, h := range hosts {
		t, err := target.Parse(h)
		if err != nil {
			return nil, err
		}
		targets[i] = t
	}
	collected := make([]*facts.Snapshot, len(targets))
	errs := make([]error, len(targets))
	var progress sync.Mutex
	say := func(format string, args ...any) {
		if o.Progress == nil {
			return
		}
		progress.Lock()
		defer progress.Unlock()
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			say("collecting %s…", t)
			collected[i], errs[i] = collect.Collect(ctx, t, o.Collect)
			if errs[i] == nil {
				say("collected %s", t)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return append(snaps, collected...), nil
}

func readFile(path string) (*facts.Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %v", err)
	}
	defer f.Close()
	s, err := collect.ReadSnapshot(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}
