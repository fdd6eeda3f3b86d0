package fix

import (
	"context"

	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Platform decides how a fix is made persistent.
type Platform = remedy.Platform

const (
	Linux   = remedy.Linux
	OpenWrt = remedy.OpenWrt
)

// SysctlConf is the file wgperf owns for persistent sysctls.
const SysctlConf = remedy.SysctlConf

// Env is where actions run: the remedy planning environment (target,
// platform, kernel, config root) plus what the journal needs.
type Env struct {
	remedy.Env
	// journalOK: the journal directory passed trustJournal (it is root's and
	// 0700, so nobody else can change what is in it afterwards).
	journalOK bool
}

// Detect fills an Env by asking the target: kernel, OpenWrt or not, nft or not.
func Detect(ctx context.Context, t target.Target, root string) (*Env, error) {
	e, err := remedy.Detect(ctx, t, root)
	if err != nil {
		return nil, err
	}
	return &Env{Env: *e}, nil
}

func (e *Env) sh(ctx context.Context, line string) ([]byte, error) { return e.Env.Sh(ctx, line) }

func (e *Env) exists(ctx context.Context, p string) (bool, error) { return e.Env.Exists(ctx, p) }

// fresh returns a copy of e that plans against the host as it is now.
func (e *Env) fresh() *Env { return &Env{Env: *e.Env.Fresh(), journalOK: e.journalOK} }

func dir(p string) string { return remedy.Dir(p) }
