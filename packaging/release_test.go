package packaging

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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
	name     string // in artifact names: amd64, arm64, armv7, mipsle_softfloat, mips_softfloat
	machine  elf.Machine
	class    elf.Class
	order    binary.ByteOrder
	goarch   string
	settings map[string]string // build settings recorded in the binary
	debArch  string
	rpmArch  string // in the rpm's file name (wgperf-VERSION-1.ARCH.rpm)
}

var platforms = []platform{
	{"amd64", elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, "amd64", nil, "amd64", "x86_64"},
	{"arm64", elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian, "arm64", nil, "arm64", "aarch64"},
	{"armv7", elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, "arm", map[string]string{"GOARM": "7"}, "armhf", "armv7hl"},
	{"mipsle_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.LittleEndian, "mipsle", map[string]string{"GOMIPS": "softfloat"}, "mipsel", "mipsel"},
	{"mips_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.BigEndian, "mips", map[string]string{"GOMIPS": "softfloat"}, "mips", "mips"},
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
	gr, minisign := gobin("goreleaser"), gobin("minisign")
	for _, tool := range []string{gr, minisign} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s is not installed (scripts/goreleaser.sh installs goreleaser v2.15.1 and minisign): release artifacts not checked", filepath.Base(tool))
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
		"PATH="+filepath.Dir(minisign)+string(os.PathListSeparator)+os.Getenv("PATH"))
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
	"amd64":            {"x86_64"},
	"arm64":            {"aarch64_cortex-a53", "aarch64_generic"},
	"armv7":            {"arm_cortex-a7_neon-vfpv4", "arm_cortex-a9_vfpv3-d16"},
	"mipsle_softfloat": {"mipsel_24kc"},
	"mips_softfloat":   {"mips_24kc"},
}

// TestReleaseArtifacts opens every archive and package: the binary is a
// static, stripped ELF for its platform built with the release settings (the
// OpenWrt packages' is the router build, -tags router; the others the full
// build), and the files around it (license, systemd unit, its drop-in and
// flags file, maintainer scripts, man pages, completions, procd script and
// uci file) are the ones in the repository.
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
	copyright := repoFile(t, "packaging/debian/copyright")
	scripts := map[string][]byte{}
	for _, s := range []string{"postinstall", "preremove", "postremove"} {
		scripts[s] = repoFile(t, "packaging/scripts/"+s+".sh")
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
			checkSBOM(t, filepath.Join(d, arch+".cdx.json"), version)

			debPath := one(t, d, "wgperf_*_"+p.name+".deb")
			deb := readAr(t, debPath)
			control := readTarGzBytes(t, debPath, deb["control.tar.gz"])
			if got := field(control["./control"].data, "Architecture"); got != p.debArch {
				t.Errorf("%s: Architecture %q, want %q", debPath, got, p.debArch)
			}
			for name, script := range map[string]string{"postinst": "postinstall", "prerm": "preremove", "postrm": "postremove"} {
				checkFile(t, debPath, "DEBIAN/"+name, control["./"+name], scripts[script])
			}
			if !bytes.Contains(control["./conffiles"].data, []byte("/etc/default/wgperf-exporter\n")) {
				t.Errorf("%s: /etc/default/wgperf-exporter is not a conffile:\n%s", debPath, control["./conffiles"].data)
			}
			data := readTarGzBytes(t, debPath, deb["data.tar.gz"])
			checkBinary(t, debPath, version, p, data["./usr/bin/wgperf"], "")
			for path, want := range map[string][]byte{"/usr/lib/systemd/system/wgperf-exporter.service": unit,
				"/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf": dropIn,
				"/etc/default/wgperf-exporter":                                      flags, "/usr/share/doc/wgperf/copyright": copyright} {
				checkFile(t, debPath, path, data["."+path], want)
			}
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
			rpmPath := one(t, d, "wgperf-*-1."+p.rpmArch+".rpm")
			rpm := readRPM(t, rpmPath)
			checkBinary(t, rpmPath, version, p, rpm["/usr/bin/wgperf"], "")
			for path, want := range map[string][]byte{"/usr/lib/systemd/system/wgperf-exporter.service": unit,
				"/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf": dropIn, "/etc/sysconfig/wgperf-exporter": flags,
				"/usr/share/doc/wgperf/LICENSE": license} {
				checkFile(t, rpmPath, path, rpm[path], want)
			}
			checkKit(t, rpmPath, rpm, "")
			checkRPMDependencies(t, rpmPath)
			if p.name == "amd64" {
				checkLintian(t, debPath)
			}
			if !rpm["/usr/share/man/man1/wgperf-exporter.1.gz"].ok || !rpm["/usr/share/zsh/site-functions/_wgperf"].ok {
				t.Errorf("%s: no man pages or zsh completion", rpmPath)
			}
			raw, _ := os.ReadFile(rpmPath)
			for name, script := range scripts {
				if !bytes.Contains(raw, bytes.TrimPrefix(script, []byte("#!/bin/sh\n"))) {
					t.Errorf("%s: the %s scriptlet is not packaging/scripts/%s.sh", rpmPath, name, name)
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
		"i386": elf.EM_386, "mips64": elf.EM_MIPS}
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
		if f.Machine != families[family] || (family == "mipsel") != (f.ByteOrder == binary.LittleEndian && f.Machine == elf.EM_MIPS) {
			t.Errorf("%s: a %v %v binary for %s", ipkPath, f.Machine, f.ByteOrder, owrt)
		}
	}
	if len(ipks) < 10 {
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

// checkLintian runs Debian's package checker on the .deb: no error. The
// binary is static by design (one binary for every distribution, no libc),
// which lintian calls an error for a package built outside Debian's Go
// toolchain: that tag alone is suppressed. Its warnings are logged (the
// maintainer scripts' systemctl calls, nfpm's Architecture-Variant field,
// the native changelog's name): they are known and not yet mended.
func checkLintian(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("lintian"); err != nil {
		t.Log("lintian is not installed (make deps-test): the .deb is not checked against Debian policy")
		return
	}
	out, err := exec.Command("lintian", "--tag-display-limit", "0", "--suppress-tags", "statically-linked-binary",
		"--fail-on", "error", path).CombinedOutput()
	if err != nil {
		t.Errorf("lintian %s: %v\n%s", path, err, out)
		return
	}
	t.Logf("lintian %s: no error; it says:\n%s", path, out)
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
	for _, name := range []string{"wgperf_" + version + "_mipsel_24kc.ipk", "wgperf-" + version + ".tar.gz", "wgperf_" + version + "_linux_amd64.tar.gz.cdx.json"} {
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

// checkSBOM: a CycloneDX document naming the release and the modules its
// binary links.
func checkSBOM(t *testing.T, path, version string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	var bom struct {
		BOMFormat, SpecVersion string
		Metadata               struct {
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version, PURL string }
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]bool{}
	for _, c := range bom.Components {
		names[c.Name] = c.PURL == "pkg:golang/"+c.Name+"@"+c.Version
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/wgperf/wgperf" ||
		bom.Metadata.Component.Version != "v"+version || !names["github.com/spf13/cobra"] || !names["stdlib"] {
		t.Errorf("%s: %s %s for %s %s, components %v", path, bom.BOMFormat, bom.SpecVersion, bom.Metadata.Component.Name, bom.Metadata.Component.Version, names)
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

// entry is one file read from an archive.
type entry struct {
	data []byte
	mode int64
	ok   bool
}

func checkFile(t *testing.T, where, path string, got entry, want []byte) {
	t.Helper()
	if !got.ok {
		t.Errorf("%s: no %s", where, path)
	} else if !bytes.Equal(got.data, want) {
		t.Errorf("%s: %s differs from the repository's", where, path)
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

func readTarGz(t *testing.T, path string) map[string]entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readTarGzBytes(t, path, b)
}

func readTarGzBytes(t *testing.T, where string, b []byte) map[string]entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return readTar(t, where, zr)
}

func readTar(t *testing.T, where string, r io.Reader) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		out[h.Name] = entry{data, h.Mode, true}
	}
}

// readAr reads a Debian package's ar members.
func readAr(t *testing.T, path string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("!<arch>\n")) {
		t.Fatalf("%s: not an ar archive", path)
	}
	out := map[string][]byte{}
	for off := 8; off+60 <= len(b); {
		h := b[off : off+60]
		name := strings.TrimRight(strings.TrimSpace(string(h[:16])), "/")
		var size int
		if _, err := fmt.Sscan(strings.TrimSpace(string(h[48:58])), &size); err != nil || off+60+size > len(b) {
			t.Fatalf("%s: bad ar member %q", path, name)
		}
		out[name] = b[off+60 : off+60+size]
		off += 60 + size + size%2
	}
	return out
}

// readRPM skips the lead and both headers and reads the gzip'd cpio payload.
func readRPM(t *testing.T, path string) map[string]entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 96 || !bytes.HasPrefix(b, []byte{0xed, 0xab, 0xee, 0xdb}) {
		t.Fatalf("%s: not an rpm", path)
	}
	header := func(off int) int {
		if off+16 > len(b) || !bytes.HasPrefix(b[off:], []byte{0x8e, 0xad, 0xe8}) {
			t.Fatalf("%s: bad rpm header at %d", path, off)
		}
		n, size := binary.BigEndian.Uint32(b[off+8:]), binary.BigEndian.Uint32(b[off+12:])
		return off + 16 + 16*int(n) + int(size)
	}
	off := header(96)
	off = (off + 7) / 8 * 8 // the signature header is padded to 8 bytes
	off = header(off)
	zr, err := gzip.NewReader(bytes.NewReader(b[off:]))
	if err != nil {
		t.Fatalf("%s: payload: %v", path, err)
	}
	return readCpio(t, path, bufio.NewReader(zr))
}

// readCpio reads a "newc" cpio archive (rpm payloads); names lose their leading ".".
func readCpio(t *testing.T, where string, r *bufio.Reader) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	pad := func(n int) {
		if _, err := io.CopyN(io.Discard, r, int64((4-n%4)%4)); err != nil {
			t.Fatalf("%s: cpio: %v", where, err)
		}
	}
	for {
		h := make([]byte, 110)
		if _, err := io.ReadFull(r, h); err != nil {
			t.Fatalf("%s: cpio header: %v", where, err)
		}
		if string(h[:6]) != "070701" {
			t.Fatalf("%s: cpio magic %q", where, h[:6])
		}
		hex := func(i int) int {
			var v int
			fmt.Sscanf(string(h[6+8*i:14+8*i]), "%08x", &v)
			return v
		}
		mode, size, nameLen := hex(1), hex(6), hex(11)
		name := make([]byte, nameLen)
		if _, err := io.ReadFull(r, name); err != nil {
			t.Fatalf("%s: cpio name: %v", where, err)
		}
		pad(110 + nameLen)
		n := strings.TrimPrefix(strings.TrimRight(string(name), "\x00"), ".")
		if n == "TRAILER!!!" {
			return out
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatalf("%s: cpio %s: %v", where, n, err)
		}
		pad(size)
		out[n] = entry{data, int64(mode & 0o7777), true}
	}
}

// field returns a Debian control field.
func field(control []byte, name string) string {
	for _, line := range strings.Split(string(control), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
