package exporter

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/target"
)

// allowRule is one --probe.allow pattern, matched on the parsed target, never
// on its text: the target's kind reads the pattern (an ssh pattern admits by
// what ssh will dial: user, host, port), so "ssh:root@10.0.0.1@evil.example"
// and "ssh:root@10.0.0.5.evil.example" fall outside "ssh:root@10.0.0.*".
type allowRule struct {
	pattern string
	match   func(target.Spec) bool
}

// parseAllow reads one pattern, written in a kind of target the exporter may
// probe: local, netns:GLOB, or ssh:[USER@]HOST[:PORT] where HOST is a glob of
// dot-separated labels, an address or a CIDR prefix, and PORT a number or "*".
func parseAllow(pattern string) (allowRule, error) {
	match, ok, err := target.Pattern(pattern)
	switch {
	case !ok:
		return allowRule{}, fmt.Errorf("--probe.allow %q: want %s (patterns: *, ?, [a-z]; a host may be a prefix, 10.0.0.0/24)", pattern, target.ProbeSyntax())
	case err != nil:
		return allowRule{}, fmt.Errorf("--probe.allow %q: %v", pattern, err)
	}
	return allowRule{pattern: pattern, match: match}, nil
}

// admits reports whether the rule lets /probe collect the target spec text
// (false for text that is no target).
func (r allowRule) admits(spec string) bool {
	s, err := target.ParseSpec(spec)
	return err == nil && r.match(s)
}
