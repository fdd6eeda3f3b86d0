package report

import (
	"bytes"
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/outfile"
)

// WriteFile writes doc to path as WriteHTML renders it (a command's --html),
// stamping when it was made. It is often run as root: a link planted on the
// way is not followed (outfile).
func WriteFile(path string, doc Document) error {
	if doc.Generated.IsZero() {
		doc.Generated = time.Now()
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, doc); err != nil {
		return err
	}
	if err := outfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--html %v", err)
	}
	return nil
}
