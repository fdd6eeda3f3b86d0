package guest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindKernelPicksNewestWithWireGuard(t *testing.T) {
	root := t.TempDir()
	boot, mods := filepath.Join(root, "boot"), filepath.Join(root, "modules")
	for _, rel := range []string{"6.1.0-9-amd64", "6.1.0-56-amd64", "6.12.0-1-cloud", "5.4.0-old"} {
		touch(t, filepath.Join(boot, "vmlinuz-"+rel))
	}
	// 6.12 cloud has no WireGuard; 5.4 has it built in; 6.1.0-9 and -56 as modules.
	touch(t, filepath.Join(mods, "6.1.0-9-amd64/kernel/drivers/net/wireguard/wireguard.ko"))
	touch(t, filepath.Join(mods, "6.1.0-56-amd64/kernel/drivers/net/wireguard/wireguard.ko.xz"))
	touch(t, filepath.Join(mods, "6.12.0-1-cloud/kernel/drivers/net/veth.ko"))
	touch(t, filepath.Join(mods, "5.4.0-old/modules.builtin"))
	if err := os.WriteFile(filepath.Join(mods, "5.4.0-old/modules.builtin"), []byte("kernel/drivers/net/wireguard/wireguard.ko\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FindKernel(boot, mods)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(boot, "vmlinuz-6.1.0-56-amd64"); got != want {
		t.Errorf("FindKernel = %s, want %s (newest with WireGuard; -56 sorts after -9)", got, want)
	}
}

func TestFindKernelSaysWhatToInstall(t *testing.T) {
	root := t.TempDir()
	_, err := FindKernel(filepath.Join(root, "boot"), filepath.Join(root, "modules"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install linux-image-amd64") {
		t.Errorf("no kernel: err = %v, want the package to install", err)
	}
	touch(t, filepath.Join(root, "boot", "vmlinuz-6.12.0-1-cloud"))
	_, err = FindKernel(filepath.Join(root, "boot"), filepath.Join(root, "modules"))
	if err == nil || !strings.Contains(err.Error(), "no kernel in") || strings.Contains(err.Error(), "\n") {
		t.Errorf("kernel without WireGuard: err = %v, want one line naming it", err)
	}
}

func TestMarkerWriterStartsAtTheMarker(t *testing.T) {
	var out strings.Builder
	up := make(chan struct{})
	m := &markerWriter{w: &out, up: up}
	// QEMU's and vng's words come first and stay out of the command's output;
	// the marker may arrive split across writes.
	for _, chunk := range []string{"virtme: waiting\nqemu warning\nwgperf-gu", "est-up 6.1.0-56-amd64\nfirst line of the command\n", "second\n"} {
		if _, err := m.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-up:
	case <-time.After(time.Second):
		t.Fatal("marker not seen")
	}
	if out.String() != "first line of the command\nsecond\n" {
		t.Errorf("passed through %q", out.String())
	}
	if m.release() != "6.1.0-56-amd64" {
		t.Errorf("release = %q", m.release())
	}
	if !strings.Contains(m.early(), "qemu warning") {
		t.Errorf("early = %q, want QEMU's words kept for a boot failure", m.early())
	}
}

func TestBootFailureReason(t *testing.T) {
	early := "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\nqemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed.\n"
	if got := lastLine(early, nil); got != "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" {
		t.Errorf("reason = %q", got)
	}
	if got := lastLine("\x1b]52;c;aGk=\x07boom\n", nil); strings.ContainsRune(got, 0x1b) {
		t.Errorf("reason kept a raw escape: %q", got)
	}
}

func TestVngArgs(t *testing.T) {
	args := vngArgs(Options{RWDirs: []string{"out"}, Env: []string{"A=b c"}, CPUs: 2}, "/boot/vmlinuz-6.1", true, []string{"bin/wgperf", "lab", "run", "it's"})
	line := strings.Join(args, " ")
	for _, want := range []string{"--run /boot/vmlinuz-6.1", "--memory 2G", "--cpus 2", "--disable-kvm", "--rwdir out"} {
		if !strings.Contains(line, want) {
			t.Errorf("args %q lack %q", line, want)
		}
	}
	exec := args[len(args)-1]
	if !strings.HasPrefix(exec, `echo "`+upMarker+`$(uname -r)" >&2; exec env 'A=b c' bin/wgperf lab run 'it'`) {
		t.Errorf("--exec %q: want the marker, then the quoted command", exec)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// make deps links vng from a virtualenv into /usr/local/bin; vng starts
// virtme-run by name, which lives only beside the real vng.
func TestScriptDirFollowsTheLink(t *testing.T) {
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(venv, "vng"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "vng")
	if err := os.Symlink(filepath.Join(venv, "vng"), link); err != nil {
		t.Fatal(err)
	}
	if got := scriptDir(link); got != venv {
		t.Errorf("scriptDir(%s) = %s, want the virtualenv's bin %s", link, got, venv)
	}
	if got := scriptDir(filepath.Join(dir, "missing")); got != dir {
		t.Errorf("a path that does not resolve: %s, want its own directory %s", got, dir)
	}
}
