//go:build !router

package exporter

import (
	"context"
	"log/slog"
	"slices"
)

// Handler is l as a slog.Handler, for exporter-toolkit's log/slog: its
// records become lines of l (its level, its format), key=value pairs and
// all, beside wgperf's own.
func (l *Logger) Handler() slog.Handler { return &slogHandler{l: l} }

type slogHandler struct {
	l      *Logger
	attrs  []attr
	prefix string // the groups opened, "g1.g2."
}

func levelOf(lv slog.Level) int {
	switch {
	case lv < slog.LevelInfo:
		return levelDebug
	case lv < slog.LevelWarn:
		return levelInfo
	case lv < slog.LevelError:
		return levelWarn
	}
	return levelError
}

func (h *slogHandler) Enabled(_ context.Context, lv slog.Level) bool {
	return h.l.enabled(levelOf(lv))
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	as := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		as = appendSlog(as, h.prefix, a)
		return true
	})
	at := r.Time
	if at.IsZero() {
		at = h.l.now()
	}
	h.l.write(levelOf(r.Level), at, r.Message, as)
	return nil
}

func (h *slogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = appendSlog(c.attrs, h.prefix, a)
	}
	return &c
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "."
	return &c
}

// appendSlog adds a, its groups flattened to dotted keys as slog's
// TextHandler writes them; empty attributes are dropped as slog drops them.
func appendSlog(as []attr, prefix string, a slog.Attr) []attr {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return as
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			as = appendSlog(as, prefix, g)
		}
		return as
	}
	return append(as, attr{prefix + a.Key, a.Value.Any()})
}
