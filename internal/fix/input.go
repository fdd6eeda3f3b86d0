package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/finding"
)

// ReadFindings reads the findings of a "wgperf diagnose --json" file: either a
// JSON array of findings or an object with a "findings" array.
func ReadFindings(r io.Reader) ([]finding.Finding, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		var list []finding.Finding
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("findings file: %v", err)
		}
		return list, nil
	}
	var doc struct {
		Findings *[]finding.Finding `json:"findings"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("findings file: not JSON from wgperf diagnose --json: %v", err)
	}
	if doc.Findings == nil {
		return nil, fmt.Errorf("findings file: no \"findings\" in it (want the output of wgperf diagnose --json)")
	}
	return *doc.Findings, nil
}
