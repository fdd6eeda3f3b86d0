package packaging

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// DistEnv names a dist/ folder "make release-snapshot" already filled; without
// it the test runs goreleaser into a temporary folder.
const DistEnv = "WGPERF_RELEASE_DIST"

// platform is one release target and what its binary must be.
type platform struct {
	name     string // in archive names: amd64, arm64, armv7, mipsle_softfloat, mips_softfloat, riscv64...
	machine  elf.Machine
	class    elf.Class
	order    binary.ByteOrder
	goarch   string
	settings map[string]string // build settings recorded in the binary
	debArch  string            // Debian's, in the .deb's file name too (wgperf_VERSION-1_ARCH.deb)
	rpmArch  string            // in the rpm's file name (wgperf-VERSION-1.ARCH.rpm)
}

var platforms = []platform{
	{"amd64", elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, "amd64", nil, "amd64", "x86_64"},
	{"arm64", elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian, "arm64", nil, "arm64", "aarch64"},
	{"armv7", elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, "arm", map[string]string{"GOARM": "7"}, "armhf", "armv7hl"},
	{"mipsle_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.LittleEndian, "mipsle", map[string]string{"GOMIPS": "softfloat"}, "mipsel", "mipsel"},
	{"mips_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.BigEndian, "mips", map[string]string{"GOMIPS": "softfloat"}, "mips", "mips"},
	{"riscv64", elf.EM_RISCV, elf.ELFCLASS64, binary.LittleEndian, "riscv64", nil, "riscv64", "riscv64"},
	{"loong64", elf.EM_LOONGARCH, elf.ELFCLASS64, binary.LittleEndian, "loong64", nil, "loong64", "loongarch64"},
	{"mips64le_softfloat", elf.EM_MIPS, elf.ELFCLASS64, binary.LittleEndian, "mips64le", map[string]string{"GOMIPS64": "softfloat"}, "mips64el", "mips64el"},
}

// routerPlatforms are built for OpenWrt only (no archive, .deb or .rpm), each
// with an OpenWrt architecture its ipk must be published under.
var routerPlatforms = []struct {
	platform
	openwrt string
}{
	{platform{"armv5", elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, "arm", map[string]string{"GOARM": "5"}, "", ""}, "arm_cortex-a9"},
	{platform{"armv5", elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, "arm", map[string]string{"GOARM": "5"}, "", ""}, "arm_arm1176jzf-s_vfp"},
	{platform{"386", elf.EM_386, elf.ELFCLASS32, binary.LittleEndian, "386", map[string]string{"GO386": "softfloat"}, "", ""}, "i386_pentium4"},
	{platform{"mips64", elf.EM_MIPS, elf.ELFCLASS64, binary.BigEndian, "mips64", map[string]string{"GOMIPS64": "softfloat"}, "", ""}, "mips64_octeonplus"},
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func repoFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// release is a dist/ folder, the folder of its OpenWrt packages (build/openwrt:
// goreleaser globs extra files inside the repository only) and the public key
// its checksums are signed with ("" when the folder came from DistEnv without PubKeyEnv).
type release struct{ dir, openwrt, pubKey string }

// PubKeyEnv names the minisign public key of a DistEnv folder's signature.
const PubKeyEnv = "WGPERF_RELEASE_PUBKEY"

var (
	built    release
	buildErr string
	buildRan bool
)

// dist returns the release to check, building it once per test binary: a
// snapshot signed with a throw-away minisign key, with the OpenWrt feed
// Makefile make release-snapshot writes beside it.
func dist(t *testing.T) release {
	t.Helper()
	if d := os.Getenv(DistEnv); d != "" {
		return release{d, filepath.Join(repoRoot(t), "build", "openwrt"), os.Getenv(PubKeyEnv)}
	}
	gobin := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		out, _ := exec.Command("go", "env", "GOPATH").Output()
		return filepath.Join(strings.TrimSpace(string(out)), "bin", name)
	}
	gr, minisign, cyclonedx := gobin("goreleaser"), gobin("minisign"), gobin("cyclonedx-gomod")
	for _, tool := range []string{gr, minisign, cyclonedx} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s is not installed (scripts/goreleaser.sh installs goreleaser v2.15.1, minisign and cyclonedx-gomod): release artifacts not checked", filepath.Base(tool))
		}
	}
	if testing.Short() {
		t.Skip("-short: building every release artifact takes minutes")
	}
	if buildRan {
		if buildErr != "" {
			t.Fatal(buildErr)
		}
		return built
	}
	buildRan = true
	root := repoRoot(t)
	dir, err := os.MkdirTemp("", "wgperf-release-")
	if err != nil {
		t.Fatal(err)
	}
	// Kept for the other tests of this run; removed when the binary exits.
	cleanupDirs = append(cleanupDirs, dir)
	fail := func(format string, args ...any) {
		buildErr = fmt.Sprintf(format, args...)
		t.Fatal(buildErr)
	}
	key, pub := filepath.Join(dir, "minisign.key"), filepath.Join(dir, "minisign.pub")
	if out, err := exec.Command(minisign, "-G", "-W", "-p", pub, "-s", key).CombinedOutput(); err != nil {
		fail("minisign -G: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "goreleaser.yaml")
	distDir := filepath.Join(dir, "dist")
	conf := append(repoFile(t, ".goreleaser.yaml"), []byte("\ndist: "+distDir+"\n")...)
	if err := os.WriteFile(cfg, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"release", "--snapshot", "--clean", "--config", cfg}
	// A machine that must keep CPUs free for something else can limit the builds.
	if n := os.Getenv("WGPERF_RELEASE_PARALLELISM"); n != "" {
		args = append(args, "--parallelism", n)
	}
	cmd := exec.Command(gr, args...)
	cmd.Dir = root
	epoch, err := exec.Command("git", "-C", root, "log", "-1", "--format=%ct").Output()
	if err != nil {
		fail("git log: %v", err)
	}
	cmd.Env = append(os.Environ(), "MINISIGN_KEY="+key, "SOURCE_DATE_EPOCH="+strings.TrimSpace(string(epoch)),
		// goreleaser reads the commit, its date and the source archive from
		// git only where an origin remote exists; a worktree may have none.
		"WGPERF_TOOLS="+filepath.Join(root, "build", "tools"),
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url", "GIT_CONFIG_VALUE_0=https://github.com/wgperf/wgperf.git",
		"PATH="+filepath.Dir(minisign)+string(os.PathListSeparator)+filepath.Dir(cyclonedx)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("goreleaser: %v\n%s", err, out)
	}
	feed := exec.Command("go", "run", "./packaging/openwrtpkg", "feed", "-dist", distDir)
	feed.Dir = root
	if out, err := feed.CombinedOutput(); err != nil {
		fail("openwrtpkg feed: %v\n%s", err, out)
	}
	built = release{distDir, filepath.Join(root, "build", "openwrt"), pub}
	return built
}

// cleanupDirs are removed when the test binary is done with them.
var cleanupDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range cleanupDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// one returns the single artifact in dir matching pattern.
func one(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) != 1 {
		t.Fatalf("%s: want one artifact, found %v", pattern, m)
	}
	return m[0]
}

// openwrtArches are, per platform, OpenWrt package architectures its ipk
// must be published under (openwrtpkg publishes a few more).
var openwrtArches = map[string][]string{
	"amd64":              {"x86_64"},
	"arm64":              {"aarch64_cortex-a53", "aarch64_generic"},
	"armv7":              {"arm_cortex-a7_neon-vfpv4", "arm_cortex-a9_vfpv3-d16"},
	"mipsle_softfloat":   {"mipsel_24kc"},
	"mips_softfloat":     {"mips_24kc"},
	"riscv64":            {"riscv64_riscv64", "riscv64_generic"},
	"loong64":            {"loongarch64_generic"},
	"mips64le_softfloat": {"mips64el_mips64r2"},
}

// TestReleaseArtifacts opens every archive and package: the binary is a
// static, stripped ELF for its platform built with the release settings (the
// OpenWrt packages' is the router build, -tags router; the others the full
// build), and the files around it (license, systemd unit, its drop-in and
// flags file, maintainer scripts, man pages, completions, procd script and
// uci file) are the ones in the repository; every archive and package carries
// the licences of the modules its binary links (checkLicenses).
func TestReleaseArtifacts(t *testing.T) {
	rel := dist(t)
	d := rel.dir
	unit := repoFile(t, "deploy/systemd/wgperf-exporter.service")
	dropIn := repoFile(t, "packaging/systemd/10-package.conf")
	flags := repoFile(t, "packaging/default/wgperf-exporter")
	procd := repoFile(t, "deploy/openwrt/wgperf-exporter")
	uci := repoFile(t, "deploy/openwrt/wgperf.config")
	bootUnit := repoFile(t, "deploy/systemd/wgperf-fix-rollback.service")
	bootProcd := repoFile(t, "deploy/openwrt/wgperf-fix-rollback")
	license := repoFile(t, "LICENSE")
	debScripts, rpmScripts := map[string][]byte{}, map[string][]byte{}
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		debScripts[s] = repoFile(t, "packaging/scripts/deb/"+s)
	}
	for _, s := range []string{"post", "preun", "postun"} {
		rpmScripts[s] = repoFile(t, "packaging/scripts/rpm/"+s)
	}
	var version string
	for _, p := range platforms {
		t.Run(p.name, func(t *testing.T) {
			arch := filepath.Base(one(t, d, "wgperf_*_linux_"+p.name+".tar.gz"))
			version = strings.TrimSuffix(strings.TrimPrefix(arch, "wgperf_"), "_linux_"+p.name+".tar.gz")
			files := readTarGz(t, one(t, d, arch))
			checkBinary(t, arch, version, p, files["wgperf"], "")
			for path, want := range map[string][]byte{"LICENSE": license, "deploy/systemd/wgperf-exporter.service": unit,
				"deploy/openwrt/wgperf-exporter": procd, "deploy/openwrt/wgperf.config": uci,
				"deploy/systemd/wgperf-fix-rollback.service": bootUnit, "deploy/openwrt/wgperf-fix-rollback": bootProcd} {
				checkFile(t, arch, path, files[path], want)
			}
			for src := range kit {
				checkFile(t, arch, src, files[src], repoFile(t, src))
			}
			for _, f := range []string{"man/wgperf.1.gz", "completions/wgperf.bash", "completions/_wgperf", "completions/wgperf.fish"} {
				if !files[f].ok {
					t.Errorf("%s: no %s", arch, f)
				}
			}
			checkLicenses(t, arch, files["wgperf"], files["THIRD_PARTY_LICENSES"])
			checkSBOM(t, filepath.Join(d, strings.TrimSuffix(arch, ".tar.gz")+".cdx.json"), version, files["wgperf"])

			// Debian's name: the version with its revision, Debian's architecture.
			debPath := one(t, d, "wgperf_"+pkgVersion(version)+"_"+p.debArch+".deb")
			deb := readAr(t, debPath)
			control := readTarGzBytes(t, debPath, deb["control.tar.gz"])
			ctl := control["./control"].data
			if got := field(ctl, "Architecture"); got != p.debArch {
				t.Errorf("%s: Architecture %q, want %q", debPath, got, p.debArch)
			}
			if got := field(ctl, "Version"); got != pkgVersion(version) {
				t.Errorf("%s: Version %q, want %q (with the Debian revision)", debPath, got, pkgVersion(version))
			}
			if bytes.Contains(ctl, []byte("\nArchitecture-Variant:")) {
				t.Errorf("%s: an Architecture-Variant field, which dpkg does not know:\n%s", debPath, ctl)
			}
			for name, script := range debScripts {
				checkFile(t, debPath, "DEBIAN/"+name, control["./"+name], script)
			}
			if !bytes.Contains(control["./conffiles"].data, []byte("/etc/default/wgperf-exporter\n")) {
				t.Errorf("%s: /etc/default/wgperf-exporter is not a conffile:\n%s", debPath, control["./conffiles"].data)
			}
			data := readTarGzBytes(t, debPath, deb["data.tar.gz"])
			checkBinary(t, debPath, version, p, data["./usr/bin/wgperf"], "")
			for path, want := range map[string][]byte{"/usr/lib/systemd/system/wgperf-exporter.service": unit,
				"/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf": dropIn,
				"/etc/default/wgperf-exporter":                                      flags} {
				checkFile(t, debPath, path, data["."+path], want)
			}
			checkDebianCopyright(t, debPath, data["./usr/bin/wgperf"], data["./usr/share/doc/wgperf/copyright"])
			checkKit(t, debPath, data, ".")
			for _, f := range []string{"/usr/share/man/man1/wgperf.1.gz", "/usr/share/bash-completion/completions/wgperf",
				"/usr/share/zsh/vendor-completions/_wgperf", "/usr/share/fish/vendor_completions.d/wgperf.fish",
				"/usr/share/doc/wgperf/changelog.Debian.gz"} {
				if !data["."+f].ok {
					t.Errorf("%s: no %s", debPath, f)
				}
			}
			checkBootHook(t, debPath, data, ".", bootUnit)

			// rpm's own file name: NAME-VERSION-RELEASE.ARCH.rpm.
			rpmPath := one(t, d, "wgperf-"+pkgVersion(version)+"."+p.rpmArch+".rpm")
			rpm := readRPM(t, rpmPath)
			checkBinary(t, rpmPath, version, p, rpm["/usr/bin/wgperf"], "")
			for path, want := range map[string][]byte{"/usr/lib/systemd/system/wgperf-exporter.service": unit,
				"/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf": dropIn, "/etc/sysconfig/wgperf-exporter": flags,
				"/usr/share/licenses/wgperf/LICENSE": license} {
				checkFile(t, rpmPath, path, rpm[path], want)
			}
			checkLicenses(t, rpmPath, rpm["/usr/bin/wgperf"], rpm["/usr/share/licenses/wgperf/THIRD_PARTY_LICENSES"])
			checkRPMLicenseFiles(t, rpmPath)
			checkKit(t, rpmPath, rpm, "")
			checkRPMDependencies(t, rpmPath)
			if p.name == "amd64" {
				checkLintian(t, debPath)
				checkRpmlint(t, rpmPath, version)
			}
			if !rpm["/usr/share/man/man1/wgperf-exporter.1.gz"].ok || !rpm["/usr/share/zsh/site-functions/_wgperf"].ok {
				t.Errorf("%s: no man pages or zsh completion", rpmPath)
			}
			raw, _ := os.ReadFile(rpmPath)
			for name, script := range rpmScripts {
				if !bytes.Contains(raw, bytes.TrimPrefix(script, []byte("#!/bin/sh\n"))) {
					t.Errorf("%s: the %%%s scriptlet is not packaging/scripts/rpm/%s", rpmPath, name, name)
				}
			}
			checkBootHook(t, rpmPath, rpm, "", bootUnit)

			for _, owrt := range openwrtArches[p.name] {
				ipkPath := one(t, rel.openwrt, "wgperf_*_"+owrt+".ipk")
				ipk := readTarGz(t, ipkPath)
				ctl := readTarGzBytes(t, ipkPath, ipk["./control.tar.gz"].data)
				if got := field(ctl["./control"].data, "Architecture"); got != owrt {
					t.Errorf("%s: Architecture %q, want %q", ipkPath, got, owrt)
				}
				if string(ctl["./conffiles"].data) != "/etc/config/wgperf\n" || !bytes.Contains(ctl["./postinst"].data, []byte("default_postinst")) ||
					!bytes.Contains(ctl["./prerm"].data, []byte("default_prerm")) {
					t.Errorf("%s: conffiles or OpenWrt's default maintainer scripts missing", ipkPath)
				}
				ipkData := readTarGzBytes(t, ipkPath, ipk["./data.tar.gz"].data)
				checkBinary(t, ipkPath, version, p, ipkData["./usr/bin/wgperf"], "router")
				checkLicenses(t, ipkPath, ipkData["./usr/bin/wgperf"], ipkData["./usr/share/licenses/wgperf/THIRD_PARTY_LICENSES"])
				checkFile(t, ipkPath, "/etc/init.d/wgperf-exporter", ipkData["./etc/init.d/wgperf-exporter"], procd)
				checkFile(t, ipkPath, "/etc/config/wgperf", ipkData["./etc/config/wgperf"], uci)
				if m := ipkData["./etc/init.d/wgperf-exporter"].mode; m&0o111 == 0 {
					t.Errorf("%s: procd script mode %o, want executable", ipkPath, m)
				}
				// The boot hook: OpenWrt's default_postinst enables it, as every init script.
				checkFile(t, ipkPath, "/etc/init.d/wgperf-fix-rollback", ipkData["./etc/init.d/wgperf-fix-rollback"], bootProcd)
				if m := ipkData["./etc/init.d/wgperf-fix-rollback"].mode; m&0o111 == 0 {
					t.Errorf("%s: boot hook mode %o, want executable", ipkPath, m)
				}
			}
		})
	}
	// The router-only builds: FPU-less and older ARM, i386, mips64.
	for _, p := range routerPlatforms {
		ipkPath := one(t, rel.openwrt, "wgperf_*_"+p.openwrt+".ipk")
		ipk := readTarGz(t, ipkPath)
		checkBinary(t, ipkPath, version, p.platform, readTarGzBytes(t, ipkPath, ipk["./data.tar.gz"].data)["./usr/bin/wgperf"], "router")
	}
	// Every OpenWrt package names an architecture of its binary's family.
	families := map[string]elf.Machine{"x86_64": elf.EM_X86_64, "aarch64": elf.EM_AARCH64, "arm": elf.EM_ARM, "mipsel": elf.EM_MIPS, "mips": elf.EM_MIPS,
		"i386": elf.EM_386, "mips64": elf.EM_MIPS, "mips64el": elf.EM_MIPS, "riscv64": elf.EM_RISCV, "loongarch64": elf.EM_LOONGARCH}
	ipks, _ := filepath.Glob(filepath.Join(rel.openwrt, "*.ipk"))
	for _, ipkPath := range ipks {
		ipk := readTarGz(t, ipkPath)
		owrt := field(readTarGzBytes(t, ipkPath, ipk["./control.tar.gz"].data)["./control"].data, "Architecture")
		if !strings.HasSuffix(ipkPath, "_"+owrt+".ipk") {
			t.Errorf("%s: named for another architecture than its %q", ipkPath, owrt)
		}
		f, err := elf.NewFile(bytes.NewReader(readTarGzBytes(t, ipkPath, ipk["./data.tar.gz"].data)["./usr/bin/wgperf"].data))
		if err != nil {
			t.Errorf("%s: %v", ipkPath, err)
			continue
		}
		family, _, _ := strings.Cut(strings.Replace(owrt, "x86_64", "x86-64", 1), "_")
		if family == "x86-64" {
			family = "x86_64"
		}
		littleMIPS := family == "mipsel" || family == "mips64el"
		if f.Machine != families[family] || littleMIPS != (f.ByteOrder == binary.LittleEndian && f.Machine == elf.EM_MIPS) {
			t.Errorf("%s: a %v %v binary for %s", ipkPath, f.Machine, f.ByteOrder, owrt)
		}
	}
	if len(ipks) < 30 {
		t.Errorf("%d OpenWrt packages, want one per architecture in openwrtpkg's table", len(ipks))
	}
	checkSignedSums(t, rel, version)
	checkFeed(t, d, version)
	// The unit's drop-in points it at the packaged binary and its flags file.
	for _, line := range []string{"\nExecStart=/usr/bin/wgperf exporter $WGPERF_EXPORTER_ARGS\n", "\nEnvironmentFile=-/etc/default/wgperf-exporter\n"} {
		if !bytes.Contains(dropIn, []byte(line)) {
			t.Errorf("10-package.conf lacks %q:\n%s", line, dropIn)
		}
	}
}

// pkgVersion is a release version as the .deb and .rpm write it: a
// pre-release after "~", which sorts it before the release (1.3.0~rc.1), and
// the packaging revision, -1.
func pkgVersion(version string) string {
	return strings.Replace(version, "-", "~", 1) + "-1"
}

// checkKit: a package or archive (files named with prefix) holds the
// monitoring kit where kit says (an archive: under deploy/, as in the
// repository), each file the repository's.
func checkKit(t *testing.T, where string, files map[string]entry, prefix string) {
	t.Helper()
	for src, dst := range kit {
		checkFile(t, where, dst, files[prefix+dst], repoFile(t, src))
	}
}

// checkRPMDependencies: rpm itself reads the package's weak dependencies,
// which must be Fedora's and RHEL's names, not Debian's.
func checkRPMDependencies(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Log("rpm is not installed: the rpm's recommends are not read")
		return
	}
	for _, q := range []struct{ flag, want string }{{"--recommends", "iproute\niputils\n"}, {"--suggests", "conntrack-tools\n"}} {
		out, err := exec.Command("rpm", "-qp", q.flag, path).CombinedOutput()
		if err != nil {
			t.Errorf("rpm -qp %s %s: %v\n%s", q.flag, path, err, out)
			continue
		}
		got := "\n" + string(out)
		for _, debian := range []string{"iproute2", "iputils-ping", "conntrack"} {
			if strings.Contains(got, "\n"+debian+"\n") {
				t.Errorf("rpm -qp %s %s names Debian's %s:\n%s", q.flag, path, debian, out)
			}
		}
		for _, name := range strings.Split(strings.TrimSpace(q.want), "\n") {
			if !strings.Contains(got, "\n"+name+"\n") {
				t.Errorf("rpm -qp %s %s lacks %s:\n%s", q.flag, path, name, out)
			}
		}
	}
}

// checkSignedSums verifies checksums.txt's minisign signature and that it
// lists the OpenWrt packages and the source archive too.
func checkSignedSums(t *testing.T, rel release, version string) {
	t.Helper()
	sums := filepath.Join(rel.dir, "checksums.txt")
	if rel.pubKey != "" {
		out, err := exec.Command(minisignPath(), "-V", "-p", rel.pubKey, "-m", sums, "-x", sums+".minisig").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "wgperf "+version+" checksums") {
			t.Errorf("minisign -V %s: %v\n%s", sums, err, out)
		}
	}
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wgperf_" + version + "_mipsel_24kc.ipk", "wgperf-" + version + ".tar.gz", "wgperf_" + version + "_linux_amd64.cdx.json",
		"wgperf_" + pkgVersion(version) + "_amd64.deb", "wgperf-" + pkgVersion(version) + ".x86_64.rpm", "wgperf_" + version + "_linux_riscv64.tar.gz"} {
		if !bytes.Contains(b, []byte("  "+name+"\n")) {
			t.Errorf("checksums.txt does not list %s", name)
		}
	}
}

func minisignPath() string {
	if p, err := exec.LookPath("minisign"); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	return filepath.Join(strings.TrimSpace(string(out)), "bin", "minisign")
}

// checkFeed: the feed Makefile names the release and the SHA-256 of the
// source archive, whose top folder is what OpenWrt unpacks it into.
func checkFeed(t *testing.T, d, version string) {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(d, "openwrt-feed", "wgperf", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(d, "wgperf-"+version+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"PKG_VERSION:=" + version, fmt.Sprintf("PKG_HASH:=%x", sha256.Sum256(src))} {
		if !bytes.Contains(mk, []byte("\n"+line+"\n")) {
			t.Errorf("feed Makefile lacks %s", line)
		}
	}
	files := readTarGzBytes(t, "source archive", src)
	for _, f := range []string{"go.mod", "cmd/wgperf/main.go", "deploy/openwrt/wgperf-exporter", "deploy/openwrt/wgperf.config", "LICENSE"} {
		if !files["wgperf-"+version+"/"+f].ok {
			t.Errorf("source archive lacks wgperf-%s/%s", version, f)
		}
	}
}

// checkBootHook: a .deb or .rpm (files named with prefix) installs the boot
// hook that rolls back unconfirmed fixes, without a vendor .wants link (its
// scripts enable it: TestBootHookEnabledTheDistributionsWay), and the .rpm
// its preset.
func checkBootHook(t *testing.T, where string, files map[string]entry, prefix string, unit []byte) {
	t.Helper()
	const dir = "/usr/lib/systemd/system/"
	checkFile(t, where, dir+"wgperf-fix-rollback.service", files[prefix+dir+"wgperf-fix-rollback.service"], unit)
	if files[prefix+dir+"multi-user.target.wants/wgperf-fix-rollback.service"].ok {
		t.Errorf("%s: a vendor multi-user.target.wants link enables the boot hook behind systemctl's back", where)
	}
	if prefix == "" {
		checkFile(t, where, "/usr/lib/systemd/system-preset/90-wgperf.preset", files["/usr/lib/systemd/system-preset/90-wgperf.preset"], repoFile(t, "packaging/systemd/90-wgperf.preset"))
	}
}

// checkBinary: right machine, class and byte order; statically linked (no
// interpreter, no shared libraries); stripped; built from cmd/wgperf with
// CGO off, -trimpath, the platform's GOARM/GOMIPS, the build tags given
// ("" for none) and the release's version.
func checkBinary(t *testing.T, where, version string, p platform, e entry, tags string) {
	t.Helper()
	if !e.ok {
		t.Errorf("%s: no wgperf binary", where)
		return
	}
	if e.mode&0o111 == 0 {
		t.Errorf("%s: wgperf mode %o, want executable", where, e.mode)
	}
	f, err := elf.NewFile(bytes.NewReader(e.data))
	if err != nil {
		t.Errorf("%s: wgperf is not ELF: %v", where, err)
		return
	}
	defer f.Close()
	if f.Machine != p.machine || f.Class != p.class || f.ByteOrder != p.order {
		t.Errorf("%s: ELF %v %v %v, want %v %v %v", where, f.Machine, f.Class, f.ByteOrder, p.machine, p.class, p.order)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: dynamically linked (%v)", where, prog.Type)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s: not stripped (.symtab present)", where)
	}
	if p.machine == elf.EM_MIPS && f.Class == elf.ELFCLASS32 {
		// .MIPS.abiflags: fp_abi (byte 7) 3 is soft float, as MIPS routers need
		// (32-bit MIPS only: Go writes none for mips64, whose Octeon routers
		// have an FPU).
		s := f.Section(".MIPS.abiflags")
		if s == nil {
			t.Errorf("%s: no .MIPS.abiflags", where)
		} else if b, err := s.Data(); err != nil || len(b) < 8 || b[7] != 3 {
			t.Errorf("%s: MIPS FP ABI is not soft float (%v)", where, b)
		}
	}
	info, err := buildinfo.Read(bytes.NewReader(e.data))
	if err != nil {
		t.Errorf("%s: no Go build info: %v", where, err)
		return
	}
	if info.Path != "github.com/wgperf/wgperf/cmd/wgperf" {
		t.Errorf("%s: built from %q", where, info.Path)
	}
	want := map[string]string{"GOOS": "linux", "GOARCH": p.goarch, "CGO_ENABLED": "0", "-trimpath": "true", "-tags": tags}
	for k, v := range p.settings {
		want[k] = v
	}
	got := map[string]string{}
	for _, s := range info.Settings {
		got[s.Key] = s.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: build setting %s=%q, want %q", where, k, got[k], v)
		}
	}
	// -trimpath keeps -ldflags out of the build info: look for the version
	// that -X main.version put in.
	if !bytes.Contains(e.data, []byte(version)) {
		t.Errorf("%s: version %q not in the binary (-X main.version)", where, version)
	}
}
