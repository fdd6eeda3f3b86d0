// Package packaging holds the tests of wgperf's release artifacts: the
// archives, .deb, .rpm and .ipk that goreleaser builds from .goreleaser.yaml,
// and the OpenWrt feed package in packaging/openwrt. It has no code of its own.
package packaging
