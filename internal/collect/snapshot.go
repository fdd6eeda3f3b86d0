package collect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/facts"
)

// WriteSnapshot writes s as indented JSON.
func WriteSnapshot(w io.Writer, s *facts.Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadSnapshot reads a snapshot written by WriteSnapshot. It refuses malformed
// JSON, a schema newer than this wgperf understands, and a snapshot without host.
func ReadSnapshot(r io.Reader) (*facts.Snapshot, error) {
	var s facts.Snapshot
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("snapshot: empty input")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("snapshot: malformed JSON: input ends early (truncated file?)")
		case errors.As(err, &syn):
			return nil, fmt.Errorf("snapshot: malformed JSON at byte %d: %v", syn.Offset, err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("snapshot: field %q: want %s, got JSON %s", typ.Field, typ.Type, typ.Value)
		}
		return nil, fmt.Errorf("snapshot: %v", err)
	}
	switch {
	case s.SchemaVersion == 0:
		return nil, fmt.Errorf("snapshot: no schema_version (not a wgperf snapshot?)")
	case s.SchemaVersion > facts.SchemaVersion:
		return nil, fmt.Errorf("snapshot: schema_version %d is newer than this wgperf understands (%d); upgrade wgperf", s.SchemaVersion, facts.SchemaVersion)
	case s.Host == "":
		return nil, fmt.Errorf("snapshot: no host")
	}
	return &s, nil
}
