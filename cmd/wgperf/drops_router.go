//go:build router

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// dropsCmd answers in the router build, which leaves the drop sampler out.
func dropsCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "drops",
		Short:              "Not in the router build: count the kernel's drops by reason",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return couldNotRun(errors.New("the drop sampler is not in the router build of wgperf: run wgperf drops from a full build"))
		},
	}
}
