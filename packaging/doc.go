// Package packaging holds the tests of wgperf's release artifacts: the
// archives, .deb, .rpm, OpenWrt .ipk packages, SBOMs and signed checksums
// that goreleaser builds from .goreleaser.yaml (with the helpers in
// openwrtpkg and licenses, and cyclonedx-gomod), lintian and rpmlint on the
// packages, the maintainer scripts (a .deb installed into a
// clean root with dpkg), the OpenWrt procd script and uci file, and the
// OpenWrt feed package in packaging/openwrt.
//
// No apk for OpenWrt 25.x (apk-tools v3, the ADB format) is built; looked
// for again in every registry this project builds from (December 2026):
//   - Debian 12: no apk-tools package at all ("apt-cache search apk" finds
//     only Android APK tools), so no apk to write or to check a package with;
//   - the Go module proxy: nfpm's (and so goreleaser's) apk is Alpine's v2
//     format (gzip'd tar segments), as are chainguard's go-apk and apko,
//     whose maintainers say v3 is not supported; no module writes ADB;
//   - PyPI and npm: their package lists hold Android APK tools and an
//     apk-tools Prometheus exporter, no package writer; crates.io: its
//     search is not served here, and no crate is known that writes ADB.
//
// A v3 writer of wgperf's own, from apk-tools' format notes, could not be
// checked with apk itself on a fresh CI machine, and an apk that no test
// installs would be worse than none. Users of OpenWrt 25 build the apk with
// the feed package (packaging/openwrt/wgperf) in an OpenWrt 25 SDK, which
// builds apk-tools v3 itself, from the release's source archive.
package packaging
