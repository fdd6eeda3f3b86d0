package fix

import (
	"context"

	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Env is where a fix runs: the remedy planning environment (target,
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
