// Package collect reads what wgperf needs to know about a host through a
// target.Target and returns it as a facts.Snapshot.
//
// Each source has a ParseX(io.Reader) function, separate from fetching, that is
// table-tested on real output recorded into testdata/collect/. Collect runs the
// sources concurrently; a source that fails becomes a facts.Note, never an error,
// so a snapshot from a half-broken host is still useful.
package collect
