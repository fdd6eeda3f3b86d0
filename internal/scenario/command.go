package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/report"
)

// LabRun is "wgperf lab run": the scenarios it plays (Names, or every one
// with All), how, and how it prints their results.
type LabRun struct {
	Names   []string
	All     bool
	Options Options
	JSON    bool
	Color   bool   // the table in colour (a terminal)
	HTML    string // also write the HTML report to this file
	Version string // the JSON document's wgperf_version
}

// FailedError is scenarios that did not pass.
type FailedError struct{ Failed, Of int }

func (e *FailedError) Error() string { return fmt.Sprintf("%d of %d scenarios failed", e.Failed, e.Of) }

// RunCommand plays c's scenarios one after the other and prints their
// table (or JSON document) to out; a *FailedError when any failed.
func RunCommand(ctx context.Context, c LabRun, out io.Writer) error {
	var scs []Scenario
	if c.All {
		scs = Catalog
	}
	for _, name := range c.Names {
		sc, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("no scenario %q (have: %s)", name, strings.Join(Names(), ", "))
		}
		scs = append(scs, sc)
	}
	if len(scs) == 0 {
		return fmt.Errorf("name a scenario or --all (have: %s)", strings.Join(Names(), ", "))
	}
	if os.Geteuid() != 0 {
		return errors.New("lab run needs root (network namespaces, tc, nftables)")
	}
	results, failed := PlayAll(ctx, scs, c.Options)
	if c.JSON {
		if err := document.Write(out, document.LabRun, c.Version, map[string]any{"scenarios": results}); err != nil {
			return err
		}
	} else {
		WriteTable(out, results, c.Color)
	}
	if c.HTML != "" {
		if err := report.WriteFile(c.HTML, Report(results)); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &FailedError{Failed: failed, Of: len(results)}
	}
	return nil
}
