package collect

import "github.com/wgperf/wgperf/internal/shell"

// splitWords splits a line into words as a shell would, quote being the
// quote character of the format (uci's ').
func splitWords(s string, quote byte) ([]string, error) { return shell.Split(s, quote) }
