#!/bin/sh
# Installs goreleaser (the release archives and packages: make release-snapshot,
# and the packaging test that checks every artifact) with go install, when the
# pinned version is not there yet. Go builds it from source: minutes on a fresh
# machine, so make test runs this beside the lab tests, not before them.
set -eu
version=v2.15.1
gobin=$(go env GOPATH)/bin
"$gobin/goreleaser" --version 2>/dev/null | grep -q "${version#v}" && exit 0
echo "installing: goreleaser $version (go install)" >&2
go install "github.com/goreleaser/goreleaser/v2@$version"
