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
//
// The .ipk packages are written by openwrtpkg, not by goreleaser's nfpm,
// checked again with goreleaser v2.15.1 (the version this project pins,
// scripts/goreleaser.sh), which builds with nfpm v2.45.2 (December 2026):
//   - nfpm makes one package per Go build target, and its ipk's
//     Architecture is the Go target's name mapped by nfpm's own table: a
//     goreleaser snapshot with an ipk nfpm entry, of a small program built
//     for the router build's mipsle softfloat, arm64 and arm GOARM=7 targets,
//     gave wgperf_..._linux_mipsle_softfloat.ipk, _linux_arm64.ipk and
//     _linux_armv7.ipk with "Architecture: mipsel", "arm64" and "armhf":
//     Debian's names, which OpenWrt's opkg refuses without
//     --force-architecture. OpenWrt's are per CPU (mipsel_24kc,
//     aarch64_cortex-a53, arm_cortex-a7_neon-vfpv4...), and one static
//     binary serves several: openwrtpkg writes 4, 4 and 7 packages for
//     those three targets, 33 for the release's 11 (openwrtpkg.Arches).
//   - nfpm itself can set an ipk's architecture (its ipk.arch), but
//     goreleaser's ipk section does not pass it on: it has abi_version,
//     alternatives, auto_installed, essential, predepends, tags and fields
//     only, in v2.15.1 and in v2.18.2, the newest (which needs Go 1.27);
//     the per-format overrides carry no architecture either, and an
//     Architecture given in ipk.fields is dropped (the snapshot above set
//     it: its control file kept nfpm's).
//   - were it passed on, each OpenWrt architecture of a target would still
//     need an nfpm entry of its own, as goreleaser makes one package per
//     target and entry.
//
// In the rest nfpm's ipk is what openwrtpkg writes (a gzipped tar of
// debian-binary, control.tar.gz and data.tar.gz; root-owned files with a
// fixed mtime; conffiles from config files), so the writer can go once
// goreleaser passes ipk.arch on, templated per target.
package packaging
