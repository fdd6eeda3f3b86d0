package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/shell"
)

// The snapshot is the document "wgperf collect" writes and "diagnose --from"
// reads: the facts of one host, with its own schema_version (facts.SchemaVersion).

// WriteSnapshot writes s as indented JSON, every list that is empty as []
// and every empty map as {}, never null.
func WriteSnapshot(w io.Writer, s *facts.Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(withLists(*s))
}

// withLists is s with its nil lists and maps made empty; s itself, whose
// slices it copies before changing them, stays as it is.
func withLists(s facts.Snapshot) facts.Snapshot {
	s.WireGuard = orEmpty(slices.Clone(s.WireGuard))
	for i := range s.WireGuard {
		w := &s.WireGuard[i]
		w.Peers = orEmpty(slices.Clone(w.Peers))
		for j := range w.Peers {
			w.Peers[j].AllowedIPs = orEmpty(w.Peers[j].AllowedIPs)
		}
	}
	s.Links = orEmpty(slices.Clone(s.Links))
	for i := range s.Links {
		if b := s.Links[i].Bond; b != nil {
			bond := *b
			bond.Slaves = orEmpty(bond.Slaves)
			s.Links[i].Bond = &bond
		}
	}
	s.Routes = orEmpty(s.Routes)
	s.Rules = orEmpty(s.Rules)
	s.Endpoints = orEmpty(s.Endpoints)
	s.Sysctls = orEmptyMap(s.Sysctls)
	s.Counters.SNMP = orEmptyMap(s.Counters.SNMP)
	s.Counters.Netstat = orEmptyMap(s.Counters.Netstat)
	s.Softnet = orEmpty(s.Softnet)
	s.CPU = orEmpty(s.CPU)
	s.IRQs = orEmpty(slices.Clone(s.IRQs))
	for i := range s.IRQs {
		s.IRQs[i].PerCPU = orEmpty(s.IRQs[i].PerCPU)
	}
	s.Firewall.Rules = orEmpty(s.Firewall.Rules)
	s.Firewall.Counters = orEmpty(s.Firewall.Counters)
	if s.OpenWrt != nil {
		o := *s.OpenWrt
		o.Network = orEmptyMap(o.Network)
		s.OpenWrt = &o
	}
	s.Notes = orEmpty(s.Notes)
	return s
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orEmptyMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// ReadLimited reads all of r, or fails with a one-line error naming what
// when r holds more than max bytes.
func ReadLimited(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %d MiB, refusing it", what, max>>20)
	}
	return data, nil
}

// ReadSnapshot reads a snapshot written by WriteSnapshot. It refuses input over
// MaxBytes, malformed JSON, a schema newer than this wgperf understands, and a
// snapshot without host.
func ReadSnapshot(r io.Reader) (*facts.Snapshot, error) {
	data, err := ReadLimited(r, MaxBytes, "snapshot")
	if err != nil {
		return nil, err
	}
	return DecodeSnapshot(data)
}

// DecodeSnapshot is ReadSnapshot of a snapshot already read.
func DecodeSnapshot(data []byte) (*facts.Snapshot, error) {
	var s facts.Snapshot
	dec := json.NewDecoder(bytes.NewReader(data))
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
	case s.Host.IsZero():
		return nil, fmt.Errorf("snapshot: no host")
	}
	// The host is someone else's text: unmarshalling parsed it as a target
	// spec wgperf would accept (or the decode above failed).
	// So is every other field: checks quote them into titles, plans and
	// scripts. Only mwan3 status is text of several lines.
	if err := shell.Fields(s, "openwrt.mwan3_status"); err != nil {
		return nil, fmt.Errorf("snapshot: %v", err)
	}
	return &s, nil
}
