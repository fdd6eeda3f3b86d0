//go:build !router

package drops

import (
	"context"
	"errors"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// Watch is "wgperf drops": it counts host's drops by reason for d (1 s to
// 24 h), or until ctx ends (Ctrl-C: what was counted so far). A host where
// no sampler attaches is an error saying why.
func Watch(ctx context.Context, host target.Target, d time.Duration) (Result, error) {
	if d < time.Second || d > 24*time.Hour {
		return Result{}, errors.New("--duration must be between 1s and 24h")
	}
	s := ForTarget(ctx, host)
	defer s.Close()
	if s.Status().Tier == TierNone {
		return Result{}, errors.New(s.Status().Line())
	}
	before, err := s.Snapshot(ctx)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	select {
	case <-ctx.Done(): // Ctrl-C: print what was counted so far
	case <-time.After(d):
	}
	after, err := s.Snapshot(context.WithoutCancel(ctx))
	if err != nil {
		return Result{}, err
	}
	res := Result{Status: s.Status(), Seconds: time.Since(start).Seconds(),
		Counts: Delta(before, after), Lost: after.Lost - min(after.Lost, before.Lost)}
	if res.Counts == nil {
		res.Counts = []Count{}
	}
	return res, nil
}
