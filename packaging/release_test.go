package packaging

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
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
}

var platforms = []platform{
	{"amd64", elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian, "amd64", nil, "amd64"},
	{"arm64", elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian, "arm64", nil, "arm64"},
	{"armv7", elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian, "arm", map[string]string{"GOARM": "7"}, "armhf"},
	{"mipsle_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.LittleEndian, "mipsle", map[string]string{"GOMIPS": "softfloat"}, "mipsel"},
	{"mips_softfloat", elf.EM_MIPS, elf.ELFCLASS32, binary.BigEndian, "mips", map[string]string{"GOMIPS": "softfloat"}, "mips"},
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

// dist returns the folder holding the artifacts, building them if needed.
func dist(t *testing.T) string {
	t.Helper()
	if d := os.Getenv(DistEnv); d != "" {
		return d
	}
	gr, err := exec.LookPath("goreleaser")
	if err != nil {
		out, _ := exec.Command("go", "env", "GOPATH").Output()
		gr = filepath.Join(strings.TrimSpace(string(out)), "bin", "goreleaser")
		if _, err := os.Stat(gr); err != nil {
			t.Skip("goreleaser is not installed (scripts/goreleaser.sh installs v2.15.1): release artifacts not checked")
		}
	}
	if testing.Short() {
		t.Skip("-short: building every release artifact takes minutes")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "goreleaser.yaml")
	conf := append(repoFile(t, ".goreleaser.yaml"), []byte("\ndist: "+filepath.Join(dir, "dist")+"\n")...)
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
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser: %v\n%s", err, out)
	}
	return filepath.Join(dir, "dist")
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

// TestReleaseArtifacts opens every archive and package: the binary is a
// static, stripped ELF for its platform built with the release settings (the
// .ipk's is the router build, -tags router; the others the full build), and
// the files around it (license, systemd unit and its drop-in, procd script)
// are the ones in the repository.
func TestReleaseArtifacts(t *testing.T) {
	d := dist(t)
	unit := repoFile(t, "deploy/systemd/wgperf-exporter.service")
	dropIn := repoFile(t, "packaging/systemd/10-package.conf")
	procd := repoFile(t, "deploy/openwrt/wgperf-exporter")
	bootUnit := repoFile(t, "deploy/systemd/wgperf-fix-rollback.service")
	bootProcd := repoFile(t, "deploy/openwrt/wgperf-fix-rollback")
	license := repoFile(t, "LICENSE")
	for _, p := range platforms {
		t.Run(p.name, func(t *testing.T) {
			arch := filepath.Base(one(t, d, "wgperf_*_linux_"+p.name+".tar.gz"))
			version := strings.TrimSuffix(strings.TrimPrefix(arch, "wgperf_"), "_linux_"+p.name+".tar.gz")
			files := readTarGz(t, one(t, d, arch))
			checkBinary(t, arch, version, p, files["wgperf"], "")
			for path, want := range map[string][]byte{"LICENSE": license, "deploy/systemd/wgperf-exporter.service": unit, "deploy/openwrt/wgperf-exporter": procd,
				"deploy/systemd/wgperf-fix-rollback.service": bootUnit, "deploy/openwrt/wgperf-fix-rollback": bootProcd} {
				checkFile(t, arch, path, files[path], want)
			}

			debPath := one(t, d, "wgperf_*_"+p.name+".deb")
			deb := readAr(t, debPath)
			control := readTarGzBytes(t, debPath, deb["control.tar.gz"])
			if got := field(control["./control"].data, "Architecture"); got != p.debArch {
				t.Errorf("%s: Architecture %q, want %q", debPath, got, p.debArch)
			}
			data := readTarGzBytes(t, debPath, deb["data.tar.gz"])
			checkBinary(t, debPath, version, p, data["./usr/bin/wgperf"], "")
			checkFile(t, debPath, "/usr/lib/systemd/system/wgperf-exporter.service", data["./usr/lib/systemd/system/wgperf-exporter.service"], unit)
			checkFile(t, debPath, "/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf", data["./usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf"], dropIn)
			checkFile(t, debPath, "/usr/share/doc/wgperf/LICENSE", data["./usr/share/doc/wgperf/LICENSE"], license)
			checkBootHook(t, debPath, data, ".", bootUnit)

			rpmPath := one(t, d, "wgperf_*_"+p.name+".rpm")
			rpm := readRPM(t, rpmPath)
			checkBinary(t, rpmPath, version, p, rpm["/usr/bin/wgperf"], "")
			checkFile(t, rpmPath, "/usr/lib/systemd/system/wgperf-exporter.service", rpm["/usr/lib/systemd/system/wgperf-exporter.service"], unit)
			checkFile(t, rpmPath, "/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf", rpm["/usr/lib/systemd/system/wgperf-exporter.service.d/10-package.conf"], dropIn)
			checkBootHook(t, rpmPath, rpm, "", bootUnit)

			ipkPath := one(t, d, "wgperf_*_"+p.name+".ipk")
			ipk := readTarGz(t, ipkPath)
			ipkData := readTarGzBytes(t, ipkPath, ipk["./data.tar.gz"].data)
			checkBinary(t, ipkPath, version, p, ipkData["./usr/bin/wgperf"], "router")
			checkFile(t, ipkPath, "/etc/init.d/wgperf-exporter", ipkData["./etc/init.d/wgperf-exporter"], procd)
			if m := ipkData["./etc/init.d/wgperf-exporter"].mode; m&0o111 == 0 {
				t.Errorf("%s: procd script mode %o, want executable", ipkPath, m)
			}
			checkFile(t, ipkPath, "/etc/init.d/wgperf-fix-rollback", ipkData["./etc/init.d/wgperf-fix-rollback"], bootProcd)
			if m := ipkData["./etc/init.d/wgperf-fix-rollback"].mode; m&0o111 == 0 {
				t.Errorf("%s: boot hook mode %o, want executable", ipkPath, m)
			}
			if !ipkData["./etc/rc.d/S99wgperf-fix-rollback"].ok {
				t.Errorf("%s: the boot hook is not enabled (no /etc/rc.d/S99wgperf-fix-rollback)", ipkPath)
			}
		})
	}
	// The unit's drop-in points it at the packaged binary.
	if !bytes.Contains(dropIn, []byte("\nExecStart=/usr/bin/wgperf exporter $WGPERF_EXPORTER_ARGS\n")) {
		t.Errorf("10-package.conf does not run /usr/bin/wgperf:\n%s", dropIn)
	}
}

// checkBootHook: a .deb or .rpm (files named with prefix) installs the boot
// hook that rolls back unconfirmed fixes, and enables it.
func checkBootHook(t *testing.T, where string, files map[string]entry, prefix string, unit []byte) {
	t.Helper()
	const dir = "/usr/lib/systemd/system/"
	checkFile(t, where, dir+"wgperf-fix-rollback.service", files[prefix+dir+"wgperf-fix-rollback.service"], unit)
	if !files[prefix+dir+"multi-user.target.wants/wgperf-fix-rollback.service"].ok {
		t.Errorf("%s: the boot hook is not enabled (no multi-user.target.wants link)", where)
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
	if p.machine == elf.EM_MIPS {
		// .MIPS.abiflags: fp_abi (byte 7) 3 is soft float, as MIPS routers need.
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
