#!/bin/sh
# Installs what the release build needs, with go install, when the pinned
# version is not there yet: goreleaser (make release-snapshot, and the
# packaging test that checks every artifact), minisign (the signature of
# checksums.txt; the test signs with a throw-away key and verifies) and
# CycloneDX's own Go SBOM tool, cyclonedx-gomod (the SBOMs, with the licence
# IDs the packages' third-party licence files name). Go builds them from
# source: minutes on a fresh machine, so make test runs this beside the lab
# tests, not before them.
set -eu
goreleaser=v2.15.1
minisign=v0.3.0
cyclonedx=v1.10.0
gobin=$(go env GOPATH)/bin
if ! "$gobin/goreleaser" --version 2>/dev/null | grep -q "${goreleaser#v}"; then
	echo "installing: goreleaser $goreleaser (go install)" >&2
	go install "github.com/goreleaser/goreleaser/v2@$goreleaser"
fi
if ! "$gobin/minisign" -v 2>/dev/null | grep -q "${minisign#v}"; then
	echo "installing: minisign $minisign (go install)" >&2
	go install "aead.dev/minisign/cmd/minisign@$minisign"
fi
if ! "$gobin/cyclonedx-gomod" version 2>/dev/null | grep -q "${cyclonedx}"; then
	echo "installing: cyclonedx-gomod $cyclonedx (go install)" >&2
	go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$cyclonedx"
fi
