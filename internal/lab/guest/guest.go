// Package guest boots a distro Linux kernel that has the WireGuard module (and
// netem) under QEMU, on this machine's own root filesystem, and runs one
// command inside it: the lab's way to prove a case on kernel WireGuard when
// the machine's own kernel has no module.
//
// It drives virtme-ng (vng): the guest sees the host's files read-only, with
// throw-away overlays on /etc, /var, /tmp and the like, so the same wgperf
// binary, iperf3, nft and tc run inside. KVM is used when a guest boots with
// it; otherwise (no /dev/kvm, or a host whose KVM cannot run the guest) the
// guest runs under TCG, QEMU's emulator, about ten times slower but the same
// kernel. The choice is remembered for the host's uptime.
package guest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Accel is how QEMU runs the guest.
type Accel string

const (
	AccelAuto Accel = ""    // KVM when a guest boots with it, else TCG
	AccelKVM  Accel = "kvm" // hardware virtualisation only
	AccelTCG  Accel = "tcg" // QEMU's emulator only
)

// Options configure one guest.
type Options struct {
	// Kernel is the kernel image to boot; "" picks the newest /boot/vmlinuz-*
	// whose modules include WireGuard.
	Kernel string
	Accel  Accel
	Memory string // QEMU memory size (default "2G")
	CPUs   int    // virtual CPUs (default: this machine's)
	// RWDirs are host folders the guest may write (results); everything else
	// it writes is thrown away with it. Not /tmp: iperf3's temporary file
	// cannot live on the 9p filesystem that would carry it.
	RWDirs []string
	// Env is set in the guest for the command ("NAME=value"): the guest
	// starts with a bare environment.
	Env []string
	// BootTimeout bounds the wait for the guest to start the command
	// (default: 60 s under KVM, after which wgperf falls back to TCG; 240 s
	// under TCG, after which the run fails).
	BootTimeout time.Duration
	// Progress receives one line per stage ("booting ..., up in 19 s"); nil
	// for none.
	Progress func(string)
	// Accelerator, when set, is told in one line why the guest does not use
	// KVM (TCG instead): a choice that makes it several times slower, which
	// a person or a CI log should see even where no progress is shown.
	Accelerator func(string)
	// Silence, when set, stops a guest whose command has printed nothing for
	// that long (a *SilentError): a command that reports its progress and
	// bounds each of its steps goes silent only when the guest hung, and a
	// hung guest should fail at once, not at a deadline far away. Above 2 s
	// (the wait for a finished command's output to end).
	Silence time.Duration
}

// SilentError is a guest stopped because its command went silent for
// Options.Silence.
type SilentError struct {
	For  time.Duration
	Tail string // its last output
}

func (e *SilentError) Error() string {
	return fmt.Sprintf("the guest's command printed nothing for %s and was stopped; its last output:\n%s", e.For, e.Tail)
}

// Result is what a guest run did.
type Result struct {
	Kernel   string        // the kernel release booted
	Accel    Accel         // KVM or TCG
	Fallback string        // why KVM was not used, when it was tried or unavailable
	Boot     time.Duration // from QEMU's start to the command's start
	ExitCode int           // the command's exit status
}

// guestNice is the guest's CPU priority: the lab nodes' (package lab).
const guestNice = -10

// upMarker is the first line the guest writes to its standard error, before
// the command runs: it says the guest booted and under which kernel.
const upMarker = "wgperf-guest-up "

// Requirement names what a guest needs and the package that brings it.
type Requirement struct{ Program, Package string }

// Requirements are the programs a guest run uses.
var Requirements = []Requirement{
	{"vng", "virtme-ng (make deps installs it: python3 -m pip install virtme-ng)"},
	{"qemu-system-x86_64", "qemu-system-x86 (apt-get install qemu-system-x86)"},
	{"busybox-static", "a static BusyBox (make deps unpacks busybox-static's as /usr/local/bin/busybox-static)"},
}

// Check returns one line naming the first missing requirement, the kernel
// image it would boot, or an error saying what to install.
func Check(opts Options) (string, error) {
	for _, r := range Requirements {
		if _, err := lookPath(r.Program); err != nil {
			return "", fmt.Errorf("%s is not installed: %s", r.Program, r.Package)
		}
	}
	if opts.Kernel != "" {
		if _, err := os.Stat(opts.Kernel); err != nil {
			return "", fmt.Errorf("kernel image %s: %w", opts.Kernel, err)
		}
		return opts.Kernel, nil
	}
	return FindKernel("/boot", "/lib/modules")
}

// FindKernel returns the newest kernel image in boot whose release has a
// WireGuard module under modules.
func FindKernel(boot, modules string) (string, error) {
	images, _ := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	var releases []string
	for _, img := range images {
		rel := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if hasWireGuard(filepath.Join(modules, rel)) {
			releases = append(releases, rel)
		}
	}
	if len(releases) == 0 {
		if len(images) > 0 {
			return "", fmt.Errorf("no kernel in %s has a WireGuard module (%s): apt-get install linux-image-amd64", boot, strings.Join(images, ", "))
		}
		return "", fmt.Errorf("no kernel image in %s: apt-get install linux-image-amd64", boot)
	}
	sort.Slice(releases, func(i, j int) bool { return versionLess(releases[i], releases[j]) })
	return filepath.Join(boot, "vmlinuz-"+releases[len(releases)-1]), nil
}

// hasWireGuard reports whether a release's module tree has wireguard.ko
// (compressed or not) or lists it as built in.
func hasWireGuard(dir string) bool {
	found, _ := filepath.Glob(filepath.Join(dir, "kernel/drivers/net/wireguard/wireguard.ko*"))
	if len(found) > 0 {
		return true
	}
	b, err := os.ReadFile(filepath.Join(dir, "modules.builtin"))
	return err == nil && strings.Contains(string(b), "/wireguard.ko")
}

// versionLess orders kernel releases by their numeric parts (6.1.0-9 < 6.1.0-56).
func versionLess(a, b string) bool {
	split := func(s string) []int {
		var nums []int
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			nums = append(nums, n)
		}
		return nums
	}
	na, nb := split(a), split(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	return len(na) < len(nb)
}

// kvmMemo remembers, until the host reboots (/run is tmpfs), that KVM could
// not boot a guest here, so later runs go straight to TCG.
var kvmMemo = "/run/wgperf/guest-kvm-fails"

// kvmDevice is the device KVM is reached through.
var kvmDevice = "/dev/kvm"

// guestsDir holds a file per running guest, named by its process group, so
// a cleanup after a crash ends exactly the guests wgperf started
// (scripts/ci-cleanup.sh).
var guestsDir = "/run/wgperf/guests"

// Boot bounds: a guest that has not started its command by then is stuck.
// TCG boots this kernel in 11-25 s on a 2-core machine (30 s and more beside
// a build); KVM in a few seconds where it works, while on some hosts a KVM
// guest hangs without a word. So KVM gets TCG's boot with margin before
// wgperf falls back, and TCG four times that before the run fails.
const (
	kvmBootTimeout = 60 * time.Second
	tcgBootTimeout = 240 * time.Second
)

// Run boots the guest and runs argv in it, with its output on stdout and
// stderr, and returns once the guest is gone. The command runs as root in
// the current directory, with the guest's PATH. The guest never outlives
// wgperf (target.Tree).
func Run(ctx context.Context, opts Options, argv []string, stdout, stderr io.Writer) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("guest: no command")
	}
	kernel, err := Check(opts)
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	choice := func(s string) {
		progress(s)
		if opts.Accelerator != nil {
			opts.Accelerator(s)
		}
	}
	res := &Result{Kernel: strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")}
	accel := opts.Accel
	if accel == AccelAuto {
		accel, res.Fallback = AccelKVM, kvmUnusable()
		if res.Fallback != "" {
			accel = AccelTCG
			choice("using TCG, QEMU's emulator: " + res.Fallback)
		}
	}
	if accel == AccelKVM {
		res.Accel = AccelKVM
		err := boot(ctx, opts, kernel, argv, stdout, stderr, res, progress)
		var early *bootFailure
		if !errors.As(err, &early) || opts.Accel == AccelKVM || ctx.Err() != nil {
			return res, err
		}
		res.Fallback = "KVM " + early.reason
		_ = os.MkdirAll(filepath.Dir(kvmMemo), 0o755)
		_ = os.WriteFile(kvmMemo, []byte(res.Fallback+"\n"), 0o644)
		choice("KVM could not boot the guest (" + early.reason + "): using TCG, QEMU's emulator, from now on on this host")
	}
	res.Accel = AccelTCG
	return res, boot(ctx, opts, kernel, argv, stdout, stderr, res, progress)
}

// kvmUnusable says why KVM is out before trying it, or "".
func kvmUnusable() string {
	if f, err := os.OpenFile(kvmDevice, os.O_RDWR, 0); err != nil {
		return "no usable " + kvmDevice
	} else {
		f.Close()
	}
	if b, err := os.ReadFile(kvmMemo); err == nil {
		return strings.TrimSpace(shell.Terminal(string(b))) + " (an earlier boot on this host; " + kvmMemo + ")"
	}
	return ""
}

// bootFailure is a guest that never started its command: QEMU exited or hung
// before the up marker.
type bootFailure struct{ reason string }

func (e *bootFailure) Error() string { return "the guest did not boot: " + e.reason }

// boot runs one guest under res.Accel.
func boot(ctx context.Context, opts Options, kernel string, argv []string, stdout, stderr io.Writer, res *Result, progress func(string)) error {
	vng, err := lookPath("vng")
	if err != nil {
		return err
	}
	args := vngArgs(opts, kernel, res.Accel == AccelTCG, argv)
	how, bound := "KVM", kvmBootTimeout
	if res.Accel == AccelTCG {
		how, bound = "TCG, no KVM: expect about half a minute", tcgBootTimeout
	}
	if opts.BootTimeout > 0 {
		bound = opts.BootTimeout
	}
	progress(fmt.Sprintf("booting Linux %s under QEMU (%s)", res.Kernel, how))

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	up := make(chan struct{})
	marker := &markerWriter{w: stderr, up: up}
	tail := target.NewTail(earlyKeep) // the guest's last words, for a run that had to be stopped
	heard := &lastHeard{at: time.Now()}
	errc := make(chan error, 1)
	// The guest's CPUs are QEMU's threads: they run at the lab nodes' priority
	// (in an autogroup of their own, where the kernel has autogroups), so a
	// job beside the guest does not slow the lab inside it.
	tree := target.Tree{
		Prelude: fmt.Sprintf("echo %d 2>/dev/null >/proc/self/autogroup; renice -n %d $$ >/dev/null 2>&1", guestNice, guestNice),
		Env:     guestEnv(vng),
	}
	var pgid int
	tree.Started = func(id int) { pgid = id; remember(id) }
	go func() {
		errc <- tree.Run(runCtx, io.MultiWriter(stdout, heard), io.MultiWriter(marker, tail, heard), vng, args...)
	}()
	defer func() {
		if pgid != 0 {
			_ = os.Remove(filepath.Join(guestsDir, strconv.Itoa(pgid)))
		}
	}()

	timer := time.NewTimer(bound)
	defer timer.Stop()
	finished := false
	select {
	case <-up:
	case err = <-errc:
		// vng returns after copying all output: the marker, if any, came first.
		finished = true
		select {
		case <-up:
		default: // gone before the marker: QEMU or the kernel failed, or ctx ended
			if ctx.Err() != nil {
				return fmt.Errorf("the guest was stopped while it booted (%v); its last words: %s", ctx.Err(), lastLine(marker.early(), nil))
			}
			return &bootFailure{reason: lastLine(marker.early(), err)}
		}
	case <-timer.C:
		cancel()
		<-errc
		return &bootFailure{reason: fmt.Sprintf("showed no sign of life within %s (%s)", bound, lastLine(marker.early(), errors.New("QEMU printed nothing")))}
	}
	res.Boot = time.Since(start)
	progress(fmt.Sprintf("guest up in %.0f s (Linux %s, %s)", res.Boot.Seconds(), marker.release(), res.Accel))
	if !finished {
		if err = waitHeard(errc, heard, opts.Silence); err == errSilent {
			cancel()
			<-errc
			return &SilentError{For: opts.Silence, Tail: shell.Terminal(tail.String())}
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the guest's command was stopped (%v); its last output:\n%s", ctx.Err(), shell.Terminal(tail.String()))
	}
	var te *target.Error
	if errors.As(err, &te) && te.ExitCode > 0 {
		res.ExitCode = te.ExitCode
		return nil
	}
	return err
}

// lastHeard is when the guest last wrote anything.
type lastHeard struct {
	mu sync.Mutex
	at time.Time
}

func (l *lastHeard) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.at = time.Now()
	l.mu.Unlock()
	return len(p), nil
}

func (l *lastHeard) since() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.at)
}

var errSilent = errors.New("silent")

// waitHeard waits for the guest's end, or returns errSilent once it has
// been silent for silence (0: never).
func waitHeard(errc <-chan error, heard *lastHeard, silence time.Duration) error {
	if silence <= 0 {
		return <-errc
	}
	tick := time.NewTicker(min(silence/4, 10*time.Second))
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			return err
		case <-tick.C:
			if heard.since() >= silence {
				return errSilent
			}
		}
	}
}

// remember notes a running guest's process group in guestsDir, and drops
// the notes of groups that are gone (a wgperf killed with SIGKILL leaves its
// note; its watchdog ended the guest).
func remember(pgid int) {
	if os.MkdirAll(guestsDir, 0o755) != nil {
		return
	}
	notes, _ := os.ReadDir(guestsDir)
	for _, n := range notes {
		if id, err := strconv.Atoi(n.Name()); err == nil && !target.GroupAlive(id) {
			_ = os.Remove(filepath.Join(guestsDir, n.Name()))
		}
	}
	_ = os.WriteFile(filepath.Join(guestsDir, strconv.Itoa(pgid)), nil, 0o644)
}

// guestEnv is vng's environment: wgperf's, with a PATH of absolute
// directories only (a relative entry would let vng start a virtme-run from
// the current directory) and vng's own directory first: vng starts
// virtme-run by name, and where pip put vng in a virtualenv linked into PATH
// (make deps) its siblings are not on PATH.
func guestEnv(vng string) []string {
	dirs := []string{scriptDir(vng)}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	env := []string{"PATH=" + strings.Join(dirs, string(filepath.ListSeparator))}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// vngArgs builds vng's command line: boot kernel, print the up marker on
// standard error, then exec argv.
func vngArgs(opts Options, kernel string, tcg bool, argv []string) []string {
	mem := opts.Memory
	if mem == "" {
		mem = "2G"
	}
	args := []string{"--run", kernel, "--memory", mem}
	if opts.CPUs > 0 {
		args = append(args, "--cpus", strconv.Itoa(opts.CPUs))
	}
	if tcg {
		args = append(args, "--disable-kvm")
	}
	for _, d := range opts.RWDirs {
		args = append(args, "--rwdir", d)
	}
	run := shell.Join(argv[0], argv[1:]...)
	if len(opts.Env) > 0 {
		run = shell.Join("env", opts.Env...) + " " + run
	}
	return append(args, "--exec", fmt.Sprintf(`echo "%s$(uname -r)" >&2; exec %s`, upMarker, run))
}

// lastLine is the reason a guest failed early: the last line QEMU or vng
// wrote, else the error.
func lastLine(early string, err error) string {
	lines := strings.Split(strings.TrimSpace(early), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.Contains(l, "Assertion") {
			return shell.Terminal(l)
		}
	}
	if err != nil {
		return err.Error()
	}
	return "QEMU exited"
}

// markerWriter passes the guest's standard error through, except the up
// marker line, which it takes as the sign the command started; until then it
// keeps what QEMU and vng say, for a boot failure's reason.
type markerWriter struct {
	w  io.Writer
	up chan struct{}

	mu     sync.Mutex
	seen   bool
	buf    []byte // before the marker
	kernel string
}

func (m *markerWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen {
		return m.w.Write(p)
	}
	m.buf = append(m.buf, p...)
	i := bytes.Index(m.buf, []byte(upMarker))
	if i < 0 {
		if over := len(m.buf) - earlyKeep; over > 0 {
			m.buf = m.buf[over:]
		}
		return len(p), nil
	}
	nl := bytes.IndexByte(m.buf[i:], '\n')
	if nl < 0 {
		return len(p), nil // the rest of the marker line is still to come
	}
	m.kernel = string(m.buf[i+len(upMarker) : i+nl])
	rest := m.buf[i+nl+1:]
	m.buf = m.buf[:i]
	m.seen = true
	close(m.up)
	if len(rest) > 0 {
		if _, err := m.w.Write(rest); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// earlyKeep bounds what is kept of QEMU's and vng's words before the marker.
const earlyKeep = 64 << 10

func (m *markerWriter) early() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.buf)
}

func (m *markerWriter) release() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kernel
}

// scriptDir is the directory vng really lives in, with the console scripts
// pip installed beside it (virtme-run).
func scriptDir(vng string) string {
	if real, err := filepath.EvalSymlinks(vng); err == nil {
		return filepath.Dir(real)
	}
	return filepath.Dir(vng)
}

// lookPath finds a program on PATH, or where pip puts console scripts for
// root (~/.local/bin), which PATH often lacks under sudo. As exec.LookPath,
// it never takes a program from the current directory: an empty or relative
// PATH entry is skipped (root running ./vng planted there).
func lookPath(name string) (string, error) {
	for _, dir := range append(filepath.SplitList(os.Getenv("PATH")), "/usr/local/bin", "/root/.local/bin") {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found", name)
}
