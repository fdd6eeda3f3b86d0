package remedy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Platform decides how a fix is made persistent.
type Platform string

const (
	Unknown Platform = ""        // a probe that did not look: show every variant
	Linux   Platform = "linux"   // sysctl.d, nftables include, wg-quick configs
	OpenWrt Platform = "openwrt" // uci set / commit, fw4 nftables.d
)

// Env is where actions run: the target, its platform, and the root under which
// configuration files live (tests point Root at a temporary directory so they
// never write to the real /etc).
type Env struct {
	T        target.Target
	Root     string // "/" unless a test says otherwise
	Platform Platform
	Kernel   string // uname -r
	HasNft   bool   // nft is installed; otherwise firewall actions fall back to iptables
	// WGUserspace, when set, is the shell line that makes a WireGuard
	// interface named dev where the kernel has no WireGuard (a wgperf lab's
	// userspace nodes); nil: ip link add ... type wireguard.
	WGUserspace func(dev string) string

	// overlay holds file contents planned by earlier actions of the same plan, so
	// that two actions editing one file render a consistent script.
	overlay map[string][]byte
}

// Detect fills an Env by asking the target: kernel, OpenWrt or not, nft or not.
func Detect(ctx context.Context, t target.Target, root string) (*Env, error) {
	if root == "" {
		root = "/"
	}
	env := &Env{T: t, Root: root, Platform: Linux}
	out, err := t.Run(ctx, "uname", "-r")
	if err != nil {
		return nil, err
	}
	env.Kernel = strings.TrimSpace(string(out))
	if ok, err := env.exists(ctx, env.Path("/etc/openwrt_release")); err != nil {
		return nil, err
	} else if ok {
		env.Platform = OpenWrt
	}
	if _, err := t.Run(ctx, "sh", "-c", "command -v nft"); err == nil {
		env.HasNft = true
	}
	return env, nil
}

// Path turns an absolute config path ("/etc/sysctl.d/90-wgperf.conf") into the
// path on the target under Root.
func (e *Env) Path(p string) string {
	if e.Root == "" || e.Root == "/" {
		return p
	}
	return path.Join(e.Root, p)
}

// KernelAtLeast reports whether the target's kernel is major.minor or newer.
// An unparsable version counts as new: modern defaults are the safer guess.
func (e *Env) KernelAtLeast(major, minor int) bool {
	before, known := KernelBefore(e.Kernel, major, minor)
	return !known || !before
}

// KernelBefore reports whether a kernel release ("4.19.0-27-amd64") is older
// than major.minor; known is false when the release does not parse.
func KernelBefore(release string, major, minor int) (before, known bool) {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false, false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false, false
	}
	return ma < major || (ma == major && mi < minor), true
}

// Sh runs one shell line on the target.
func (e *Env) Sh(ctx context.Context, line string) ([]byte, error) { return e.sh(ctx, line) }

// Exists reports whether path exists on the target, counting files an earlier
// step of the same plan would write.
func (e *Env) Exists(ctx context.Context, p string) (bool, error) { return e.exists(ctx, p) }

// sh runs one shell line on the target.
func (e *Env) sh(ctx context.Context, line string) ([]byte, error) {
	return e.T.Run(ctx, "sh", "-c", line)
}

// exists reports whether path exists on the target (overlay included).
func (e *Env) exists(ctx context.Context, p string) (bool, error) {
	if b, ok := e.overlay[p]; ok {
		return b != nil, nil
	}
	_, err := e.sh(ctx, "test -e "+shell.Join(p))
	if err == nil {
		return true, nil
	}
	var te *target.Error
	if errors.As(err, &te) && te.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// readFile returns a file's current content and mode, or existed=false.
func (e *Env) readFile(ctx context.Context, p string) (data []byte, mode uint32, existed bool, err error) {
	if b, ok := e.overlay[p]; ok {
		mode = 0o644
		if b != nil {
			if m, err := e.fileMode(ctx, p); err == nil {
				mode = m
			}
		}
		return b, mode, b != nil, nil
	}
	ok, err := e.exists(ctx, p)
	if err != nil || !ok {
		return nil, 0o644, false, err
	}
	data, err = e.T.ReadFile(ctx, p)
	if err != nil {
		return nil, 0, false, err
	}
	mode, err = e.fileMode(ctx, p)
	return data, mode, true, err
}

func (e *Env) fileMode(ctx context.Context, p string) (uint32, error) {
	out, err := e.T.Run(ctx, "stat", "-c", "%a", p)
	if err != nil {
		return 0, err
	}
	m, err := strconv.ParseUint(strings.TrimSpace(string(out)), 8, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: stat %s: unexpected mode %q", e.T, p, out)
	}
	return uint32(m), nil
}

// change builds a FileChange from p's current content to newData, recording it
// in the overlay; it returns nil when the file already has that content.
func (e *Env) change(ctx context.Context, p string, edit func(old []byte, existed bool) ([]byte, error)) (*FileChange, error) {
	old, mode, existed, err := e.readFile(ctx, p)
	if err != nil {
		return nil, err
	}
	newData, err := edit(old, existed)
	if err != nil {
		return nil, err
	}
	if existed && bytes.Equal(old, newData) {
		return nil, nil
	}
	if e.overlay == nil {
		e.overlay = map[string][]byte{}
	}
	e.overlay[p] = newData
	return &FileChange{Path: p, Existed: existed, Old: old, New: newData, Mode: mode}, nil
}

// Fresh returns a copy of e with an empty overlay (apply plans each action
// against the host as it is at that moment).
func (e *Env) Fresh() *Env {
	c := *e
	c.overlay = nil
	return &c
}
