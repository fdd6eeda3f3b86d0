package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/doctor"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/report"
)

func reportCmd() *cobra.Command {
	var from, htmlPath string
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Turn saved results into a self-contained HTML report",
		Long: `report reads what "wgperf bench", "mtu", "diagnose", "doctor", "icmp-burst",
"shape-sweep" or "lab run" printed with --json (it tells which by the document's "kind"; a
document from before wgperf wrote kinds, by its fields) and writes one HTML
file: the findings with their evidence and fixes, the bench matrix, per-second
throughput, congestion window and retransmit charts, the path-MTU search, the
pings and counters of an ICMP burst, each cap of a shaping sweep, and for "lab
run" a section per scenario (symptom, finding, fix, the tunnel before and after).
The file has no scripts and loads nothing from the network: it opens offline and
can be mailed as it is. The same report comes straight from those commands with
--html FILE, as it does from doctor and "fix --apply --verify".`,
		Example: `  wgperf diagnose --json > results.json
  wgperf report --from results.json --html report.html
  wgperf report --from doctor.json --html doctor.html
  wgperf lab run pmtud-blackhole --json | wgperf report --from - --html lab.html
  wgperf bench --client local --server ssh:m42 --html bench.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || htmlPath == "" {
				return &ExitError{Code: exitFailed, Err: errors.New("need --from FILE (or - for stdin) and --html FILE")}
			}
			doc, err := readResults(cmd.InOrStdin(), from)
			if err != nil {
				return couldNotRun(err)
			}
			return report.WriteFile(htmlPath, *doc)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "results JSON to read (- for standard input)")
	addHTMLFlag(cmd, &htmlPath)
	return cmd
}

func readResults(stdin io.Reader, path string) (*report.Document, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		defer f.Close()
		r = f
	}
	d, err := document.Read(r, "results")
	if err == nil && d.Kind == document.Doctor {
		// "doctor --json > doctor.json" (README): the report doctor --html writes.
		var rep doctor.Report
		if err := json.Unmarshal(d.Data, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", path, document.JSONError("doctor results", err))
		}
		doc := rep.Document()
		return &doc, nil
	}
	if err == nil && d.Kind == document.LabRun {
		var doc report.Document
		if doc, err = labRunReport(d); err == nil {
			return &doc, nil
		}
	}
	var doc *report.Document
	if err == nil {
		doc, err = report.FromDocument(d)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// addHTMLFlag gives a command the shared "--html FILE" flag; commands that
// produce results call report.WriteFile when it is set.
func addHTMLFlag(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVar(path, "html", "", "also write a self-contained HTML report to this new file, following no link on its path")
}
