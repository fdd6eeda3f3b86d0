//go:build router

package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// buildFlavor names this build in "wgperf version".
const buildFlavor = "router build: no lab, exporter on plain HTTP"

// errNotInRouterBuild answers the lab's commands in the router build, which
// leaves out the lab, its embedded WireGuard and the scenarios.
var errNotInRouterBuild = fmt.Errorf("the lab is not in the router build of wgperf: run it from a full build on a Linux host")

func labCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "lab",
		Short:              "Not in the router build: the built-in lab of WireGuard tunnels",
		DisableFlagParsing: true,
		RunE:               func(*cobra.Command, []string) error { return couldNotRun(errNotInRouterBuild) },
	}
}

// labRunReport: the router build has no lab, so no lab run results.
func labRunReport(*document.Doc) (report.Document, error) {
	return report.Document{}, errors.New("lab run results: the lab is not in the router build of wgperf")
}

// labPeer: the router build has no lab, so --verify always names its peer.
func labPeer(target.Target) (target.Target, bool) { return nil, false }

// labECMP: the router build has no lab, so "fix ecmp" names its --server.
func labECMP(target.Target) verify.ECMPSite { return verify.ECMPSite{} }
