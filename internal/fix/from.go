package fix

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
)

// ReadFrom reads "wgperf fix --from FILE" once ("-": stdin): the findings
// of a "wgperf diagnose --json" or "doctor --json" report, or those the
// checks find on a "wgperf collect" snapshot. The hosts it names are never
// contacted.
func ReadFrom(path string, stdin io.Reader) ([]finding.Finding, error) {
	file := io.NopCloser(stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--from: %v", err)
		}
		file = f
	}
	defer file.Close()
	doc, err := document.Read(file, "--from "+path)
	if err != nil {
		return nil, err
	}
	if doc.Kind == document.Snapshot {
		snap, err := document.DecodeSnapshot(doc.Data)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", path, err)
		}
		return diagnose.Findings(snap), nil
	}
	fs, err := ReadFindings(bytes.NewReader(doc.Data))
	if err != nil {
		return nil, fmt.Errorf("--from %s: %v", path, err)
	}
	return fs, nil
}
