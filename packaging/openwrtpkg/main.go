// Command openwrtpkg builds wgperf's OpenWrt packages, which goreleaser's
// .ipk cannot (it names Go's architectures, so opkg needed
// --force-architecture; packaging/doc.go says what was checked), and fills
// in the OpenWrt feed Makefile at release.
//
//	openwrtpkg ipk -binary dist/wgperf-router_linux_mipsle_softfloat/wgperf -goarch mipsle -gomips softfloat -version 1.2.3 -epoch 1767225600 -out build/openwrt
//	openwrtpkg feed -dist dist [-version 1.2.3]
//
// ipk writes one package per OpenWrt architecture the binary runs on
// (mipsel_24kc, aarch64_cortex-a53...; one static Go binary serves them
// all), laid out as OpenWrt's ipkg-build lays it out: a gzipped tar of
// debian-binary, data.tar.gz and control.tar.gz, every file owned by root
// with the commit's time, so the same commit gives the same bytes. feed
// writes the feed Makefile with the release's version and the SHA-256 of its
// source archive (PKG_HASH) from checksums.txt.
//
// Run from the repository root (goreleaser's build hook does): the package's
// files come from deploy/openwrt.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Arches maps a Go build (GOARCH, with GOARM, GOMIPS/GOMIPS64 or GO386) to
// the OpenWrt package architectures it runs on, as OpenWrt's Go feed builds
// for them. GOARM=7 uses VFPv3 (D0-D15), which every ARM target of arm_7
// has; GOARM=5 uses no FPU at all, for ARMv5 and ARMv6 cores and the
// Cortex-A7/A9 targets built without one (bcm53xx: arm_cortex-a9; ARMv4's
// arm_fa526 is below what Go supports); soft-float MIPS runs on cores
// with or without an FPU; GO386=softfloat needs no SSE2 (Pentium MMX boards).
var Arches = map[string][]string{
	"amd64":            {"x86_64"},
	"arm64":            {"aarch64_cortex-a53", "aarch64_cortex-a72", "aarch64_cortex-a76", "aarch64_generic"},
	"arm_7":            {"arm_cortex-a7_neon-vfpv4", "arm_cortex-a9_vfpv3-d16", "arm_cortex-a15_neon-vfpv4", "arm_cortex-a9_neon", "arm_cortex-a7_vfpv4", "arm_cortex-a5_vfpv4", "arm_cortex-a8_vfpv3"},
	"arm_5":            {"arm_cortex-a7", "arm_cortex-a9", "arm_arm926ej-s", "arm_xscale", "arm_arm1176jzf-s_vfp", "arm_mpcore"},
	"mipsle_softfloat": {"mipsel_24kc", "mipsel_24kc_24kf", "mipsel_74kc", "mipsel_mips32"},
	"mips_softfloat":   {"mips_24kc", "mips_4kec", "mips_mips32"},
	"mips64_softfloat": {"mips64_octeonplus", "mips64_mips64r2"},
	"386_softfloat":    {"i386_pentium4", "i386_pentium-mmx"},
	// OpenWrt's 64-bit newcomers: RISC-V boards (sifiveu, starfive...),
	// LoongArch (loongarch64) and little-endian MIPS64 (malta).
	"riscv64":            {"riscv64_riscv64", "riscv64_generic"},
	"loong64":            {"loongarch64_generic"},
	"mips64le_softfloat": {"mips64el_mips64r2"},
}

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: openwrtpkg ipk|feed [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "ipk":
		err = ipkMain(os.Args[2:])
	case "feed":
		err = feedMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want ipk or feed", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "openwrtpkg:", err)
	os.Exit(1)
}

func ipkMain(args []string) error {
	fs := flag.NewFlagSet("ipk", flag.ContinueOnError)
	binary := fs.String("binary", "", "the router build of wgperf for this target")
	goarch := fs.String("goarch", "", "its GOARCH")
	goarm := fs.String("goarm", "", "its GOARM (arm)")
	gomips := fs.String("gomips", "", "its GOMIPS or GOMIPS64 (mips, mipsle, mips64)")
	go386 := fs.String("go386", "", "its GO386 (386)")
	version := fs.String("version", "", "package version")
	epoch := fs.Int64("epoch", 0, "time of every file, in Unix seconds (the commit's, for reproducible packages)")
	out := fs.String("out", "", "folder to write the packages into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key := *goarch
	if *goarm != "" {
		key += "_" + *goarm
	}
	if *gomips != "" {
		key += "_" + *gomips
	}
	if *go386 != "" && *goarch == "386" {
		key += "_" + *go386
	}
	arches, ok := Arches[key]
	if !ok {
		return fmt.Errorf("no OpenWrt architecture for the Go build %s", key)
	}
	if *binary == "" || *version == "" || *out == "" || *epoch <= 0 {
		return errors.New("ipk needs -binary, -version, -epoch and -out")
	}
	files, err := packageFiles(*binary)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, arch := range arches {
		b, err := IPK(files, Control{Version: *version, Arch: arch}, time.Unix(*epoch, 0))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("wgperf_%s_%s.ipk", *version, arch)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// File is one file a package installs.
type File struct {
	Path string // absolute, as installed
	Mode int64
	Data []byte
}

// packageFiles are the router build, its procd scripts (the exporter and
// the boot hook that rolls back unconfirmed fixes), uci file and the licences
// of the Go modules the router build links (packaging/licenses -tags router,
// a goreleaser before hook).
func packageFiles(binary string) ([]File, error) {
	var files []File
	for _, f := range []struct {
		src, dst string
		mode     int64
	}{
		{binary, "/usr/bin/wgperf", 0o755},
		{"deploy/openwrt/wgperf-exporter", "/etc/init.d/wgperf-exporter", 0o755},
		{"deploy/openwrt/wgperf.config", "/etc/config/wgperf", 0o600},
		// Enabled by OpenWrt's default_postinst, as every init script is.
		{"deploy/openwrt/wgperf-fix-rollback", "/etc/init.d/wgperf-fix-rollback", 0o755},
		{"build/licenses/router/THIRD_PARTY_LICENSES", "/usr/share/licenses/wgperf/THIRD_PARTY_LICENSES", 0o644},
	} {
		b, err := os.ReadFile(f.src)
		if err != nil {
			return nil, err
		}
		files = append(files, File{f.dst, f.mode, b})
	}
	return files, nil
}

// Control is what the control file says beyond the fixed fields.
type Control struct {
	Version, Arch string
}

// The maintainer scripts OpenWrt's build system writes into every package:
// default_postinst enables (and outside an image build starts) the init
// scripts the package installs, default_prerm stops and disables them. The
// exporter's uci file keeps it off until its owner enables it.
const (
	postinst = "#!/bin/sh\n[ \"${IPKG_NO_SCRIPT}\" = \"1\" ] && exit 0\n[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0\n. ${IPKG_INSTROOT}/lib/functions.sh\ndefault_postinst $0 $@\n"
	prerm    = "#!/bin/sh\n[ -s ${IPKG_INSTROOT}/lib/functions.sh ] || exit 0\n. ${IPKG_INSTROOT}/lib/functions.sh\ndefault_prerm $0 $@\n"
)

// IPK builds one package.
func IPK(files []File, c Control, mtime time.Time) ([]byte, error) {
	size := 0
	for _, f := range files {
		size += len(f.Data)
	}
	control := fmt.Sprintf(`Package: wgperf
Version: %s
Source: https://github.com/wgperf/wgperf
SourceName: wgperf
License: MIT
LicenseFiles: LICENSE
Section: net
SourceDateEpoch: %d
URL: https://github.com/wgperf/wgperf
Maintainer: The wgperf authors <wgperf@users.noreply.github.com>
Architecture: %s
Installed-Size: %d
Description:  WireGuard performance diagnosis and fixes, with a Prometheus exporter
 (procd, off until enabled in /etc/config/wgperf).
`, c.Version, mtime.Unix(), c.Arch, size)
	data, err := tarGz(files, mtime)
	if err != nil {
		return nil, err
	}
	ctl, err := tarGz([]File{
		{"/control", 0o644, []byte(control)},
		{"/conffiles", 0o644, []byte("/etc/config/wgperf\n")},
		{"/postinst", 0o755, []byte(postinst)},
		{"/prerm", 0o755, []byte(prerm)},
	}, mtime)
	if err != nil {
		return nil, err
	}
	return tarGzFlat([]File{
		{"/debian-binary", 0o644, []byte("2.0\n")},
		{"/data.tar.gz", 0o644, data},
		{"/control.tar.gz", 0o644, ctl},
	}, mtime)
}

// tarGz writes files, with the folders above them, as "./path" entries
// sorted by name.
func tarGz(files []File, mtime time.Time) ([]byte, error) {
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.Path); d != "/"; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var all []File
	for d := range dirs {
		all = append(all, File{Path: d + "/", Mode: 0o755})
	}
	all = append(all, files...)
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	return tarGzFlat(append([]File{{Path: "/", Mode: 0o755}}, all...), mtime)
}

func tarGzFlat(files []File, mtime time.Time) ([]byte, error) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: "." + f.Path, Mode: f.Mode, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatGNU}
		if strings.HasSuffix(f.Path, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func feedMain(args []string) error {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	dist := fs.String("dist", "dist", "goreleaser's dist folder (checksums.txt, the source archive)")
	version := fs.String("version", "", "the release's version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" {
		// goreleaser's own record of the release it just built.
		b, err := os.ReadFile(filepath.Join(*dist, "metadata.json"))
		if err != nil {
			return fmt.Errorf("feed needs -version, or %v", err)
		}
		var meta struct{ Version string }
		if err := json.Unmarshal(b, &meta); err != nil || meta.Version == "" {
			return fmt.Errorf("%s: no version (%v)", filepath.Join(*dist, "metadata.json"), err)
		}
		*version = meta.Version
	}
	source := fmt.Sprintf("wgperf-%s.tar.gz", *version)
	sum, err := checksum(filepath.Join(*dist, "checksums.txt"), source)
	if err != nil {
		return err
	}
	mk, err := os.ReadFile("packaging/openwrt/wgperf/Makefile")
	if err != nil {
		return err
	}
	mk, err = FeedMakefile(mk, *version, sum)
	if err != nil {
		return err
	}
	out := filepath.Join(*dist, "openwrt-feed", "wgperf")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "Makefile"), mk, 0o644)
}

// checksum finds name's SHA-256 in a checksums.txt.
func checksum(path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, file, ok := strings.Cut(sc.Text(), "  "); ok && file == name {
			return sum, nil
		}
	}
	return "", fmt.Errorf("%s: no checksum of %s (is source: enabled in .goreleaser.yaml?)", path, name)
}

var (
	versionLine = regexp.MustCompile(`(?m)^PKG_VERSION:=.*$`)
	hashLine    = regexp.MustCompile(`(?m)^PKG_HASH:=.*$`)
)

// FeedMakefile sets PKG_VERSION and PKG_HASH in the feed Makefile.
func FeedMakefile(mk []byte, version, sha256 string) ([]byte, error) {
	if !versionLine.Match(mk) || !hashLine.Match(mk) {
		return nil, errors.New("packaging/openwrt/wgperf/Makefile lacks PKG_VERSION:= or PKG_HASH:=")
	}
	mk = versionLine.ReplaceAll(mk, []byte("PKG_VERSION:="+version))
	return hashLine.ReplaceAll(mk, []byte("PKG_HASH:="+sha256)), nil
}
