// Package collect reads what wgperf needs to know about a host through a
// target.Target and returns it as a facts.Snapshot.
//
// Collect runs the sources' commands in a few shell batches and hands each
// source's output to its parser (package parse); a source that fails becomes
// a facts.Note, never an error, so a snapshot from a half-broken host is
// still useful. ReadFirewall reads the firewall alone, for probes that
// compare its counters before and after a test.
package collect
