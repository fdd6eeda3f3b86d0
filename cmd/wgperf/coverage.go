//go:build !router

package main

import "github.com/wgperf/wgperf/internal/scenario"

// The coverage page needs the scenario catalog, and with it the lab: the
// full build only.
func init() { coverageDoc = scenario.Coverage }
