// Package packaging holds the tests of wgperf's release artifacts: the
// archives, .deb, .rpm, OpenWrt .ipk packages, SBOMs and signed checksums
// that goreleaser builds from .goreleaser.yaml (with the helpers in
// openwrtpkg and sbom), the maintainer scripts (a .deb installed into a
// clean root with dpkg), the OpenWrt procd script and uci file, and the
// OpenWrt feed package in packaging/openwrt.
//
// No apk for OpenWrt 25.x (apk-tools v3, the ADB format) is built: Debian 12
// has no apk-tools package, and neither PyPI, npm, crates.io nor the Go
// module proxy offers a tool or library that writes v3 packages, so no
// package could be built, let alone checked with apk itself, on a fresh CI
// machine. nfpm's apk is Alpine's v2 format. The feed package builds a
// native one inside an OpenWrt 25.x SDK.
package packaging
