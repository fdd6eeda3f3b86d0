# wgperf — run `make help` for the targets.
GO      ?= go
BIN     := bin/wgperf
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# staticcheck at a pinned release (go run builds it once into the module and build caches).
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help root deps deps-lab deps-test deps-guest build router router-size test test-kernel unit lint demo demo-kernel bench docs man clean release-snapshot bench-fleet

help: ## show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

root: # make demo and make test refuse non-root before they install anything
	@[ "$$(id -u)" -eq 0 ] || { echo "make $(MAKECMDGOALS) needs root (network namespaces, apt): sudo make $(MAKECMDGOALS)" >&2; exit 1; }

deps: ## install every tool the lab, the tests and the kernel guest use (only what is missing)
	@./scripts/deps.sh lab test guest

deps-lab: ## install what the built-in lab uses: iperf3, nftables, wireguard-tools... (apt, about 30 s)
	@./scripts/deps.sh lab

deps-test: ## install what the tests use beyond the lab: ssh, BusyBox, dropbear, groff, chromium, lintian, rpm, promtool (about 2 min)
	@./scripts/deps.sh test

deps-guest: ## install what lab vm's kernel guest needs: qemu, a distro kernel, virtme-ng, virtiofsd (about 4 min)
	@./scripts/deps.sh guest

build: ## build bin/wgperf
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/wgperf

router: ## stripped router builds (no lab) for mipsle, mips, armv7, arm64, amd64 in bin/router, with sizes
	./scripts/router-build.sh $(VERSION)

router-size: ## where the mipsle router build's bytes go, by dependency (REV=v1.0 adds that revision's column)
	./scripts/router-size.sh $(REV)

test: root deps build ## every test, root lab tests included (as root), with short fuzz runs and lint beside them
	WGPERF_TEST_BINARY=$(CURDIR)/$(BIN) ./scripts/test.sh 20000

test-kernel: root deps-lab deps-guest build ## play the whole scenario catalog on kernel WireGuard, in a guest kernel that has the module (lab vm; root)
	$(BIN) lab vm -- $(BIN) lab run --all

unit: ## the tests that need no root (root lab tests skip, also as root), in under a minute
	WGPERF_UNIT=1 $(GO) test -short -count=1 ./...

lint: ## gofmt, go vet (both builds), staticcheck (pinned)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags router ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags router ./...

# The install waits on the network and the build on the CPU: side by side
# they take about a minute less on a fresh machine.
demo: root ## diagnose and fix two real cases on the built-in lab (root; installs the lab's tools and builds first)
	@$(MAKE) --no-print-directory -j2 deps-lab build
	./scripts/demo.sh $(BIN)

demo-kernel: root deps-lab deps-guest build ## make demo's cases and the one only kernel WireGuard has, on kernel WireGuard in a guest (lab vm; root)
	./scripts/demo.sh $(BIN) kernel

bench: build ## print the speed figures (go test -bench)
	$(GO) test -run '^$$' -bench . -benchtime 5x ./...

FLEET ?= 1000
bench-fleet: root build ## the fleet figures: a lab fleet of FLEET ssh routers (default 1000), scraped by one exporter every 60 s and diagnosed by --inventory; the 1,000-peer hub (root, about 30 min at 1000)
	WGPERF_TEST_BINARY=$(CURDIR)/$(BIN) WGPERF_FLEET_BENCH=$(FLEET) $(GO) test -count=1 -run '^$$' -bench 'BenchmarkProbeFleet' -benchtime 2x -timeout 60m ./internal/exporter/
	WGPERF_TEST_BINARY=$(CURDIR)/$(BIN) WGPERF_FLEET_BENCH=$(FLEET) $(GO) test -count=1 -run '^$$' -bench 'BenchmarkDiagnoseFleet' -benchtime 1x -timeout 60m ./internal/diagnose/
	$(GO) test -count=1 -run '^$$' -bench 'Hub1000Peers' -benchtime 5x -benchmem ./internal/exporter/ ./internal/diagnose/

docs: ## regenerate docs/findings (a page per finding ID), docs/coverage.md (the cases' techniques, findings and scenarios), the schema's ID and fix kind lists from the catalogs and doctor's schema's probe results from the probe list
	rm -f docs/findings/*.md
	mkdir -p docs/findings
	$(GO) run ./cmd/wgperf checks --markdown docs/findings --coverage docs/coverage.md
	$(GO) test -count=1 -run '^TestSchemaEnumsMatchCode$$' ./cmd/wgperf -update
	$(GO) test -count=1 -run '^TestSchemaListsEveryProbe$$' ./internal/probes -update

man: ## write man pages (roff) of wgperf and every subcommand into bin/man (read one: man -l bin/man/wgperf.1)
	rm -rf bin/man
	$(GO) run -ldflags "-X main.version=$(VERSION)" ./cmd/wgperf manpages bin/man

GORELEASER := $(shell $(GO) env GOPATH)/bin/goreleaser

release-snapshot: ## build the release archives, .deb, .rpm, OpenWrt .ipk (build/openwrt), SBOMs and feed Makefile into dist/ (goreleaser, nothing published; MINISIGN_KEY=FILE signs)
	@./scripts/goreleaser.sh
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) WGPERF_TOOLS=$(CURDIR)/build/tools $(GORELEASER) release --snapshot --clean $(if $(MINISIGN_KEY),,--skip=sign)
	$(GO) run ./packaging/openwrtpkg feed -dist dist
	@ls -l dist/*.tar.gz dist/*.deb dist/*.rpm build/openwrt/*.ipk dist/openwrt-feed/wgperf/Makefile

clean: ## remove build output and any lab left behind
	-$(BIN) lab down --all 2>/dev/null
	rm -rf bin dist build
