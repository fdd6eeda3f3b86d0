package exporter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/fleet"
)

// Service discovery defaults: Prometheus asks every refresh_interval (60 s
// by default), several replicas each on its own; one reading of the
// inventory answers them all for DefaultSDCacheTTL, and a reading that hangs
// (an inventory on a stuck network mount) fails after sdLoadTimeout.
const (
	DefaultSDCacheTTL = 15 * time.Second
	sdLoadTimeout     = 10 * time.Second
)

// Discovery serves /sd: the hosts of an inventory as the target list of
// Prometheus' HTTP service discovery (http_sd_configs), a JSON array of
// {"targets": [SPEC], "labels": {...}} groups, the targets the exporter's
// /probe?target= takes. Only targets /probe admits are listed (the
// Prober's --probe.allow), so Prometheus never discovers a target the
// exporter refuses to collect. The inventory is read again when a request
// comes after TTL, so an edited inventory reaches Prometheus at its next
// refresh, as a file_sd file would.
type Discovery struct {
	// Load reads the inventory's target groups (fleet.PrometheusTargets);
	// an error that is fleet.ErrNoHost is an empty list, any other is
	// answered with 500, on which Prometheus keeps the targets it has.
	Load func(ctx context.Context) ([]fleet.TargetGroup, error)
	// TTL is how long one reading answers requests; 0 means DefaultSDCacheTTL.
	TTL time.Duration
	// LeftOut hears of the targets a reading left out (AdmittedTargets),
	// each time the set of them changes; nil: nobody.
	LeftOut func(targets []string)
	// Now as in Options.
	Now func() time.Time

	mu      sync.Mutex // held while reading, so concurrent requests share one reading
	cached  reply
	at      time.Time // when cached was read; zero: never
	refused string    // the targets the latest reading left out, as logged
}

// answer is the reply to /sd: the inventory's targets that p admits, from
// a reading at most TTL old.
func (d *Discovery) answer(ctx context.Context, p *Prober) reply {
	d.mu.Lock()
	defer d.mu.Unlock()
	ttl := d.TTL
	if ttl <= 0 {
		ttl = DefaultSDCacheTTL
	}
	if d.at.IsZero() || d.now().Sub(d.at) >= ttl {
		d.read(ctx, p)
	}
	return d.cached
}

// Refresh reads the inventory now, as a request after the TTL would, and
// returns the number of targets /sd serves and the reading's error (nil
// for an inventory or limit that selects no host): the exporter reads it
// once at start, so its warnings come at once.
func (d *Discovery) Refresh(ctx context.Context, p *Prober) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.read(ctx, p)
}

func (d *Discovery) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// read reads the inventory into d.cached; d.mu is held.
func (d *Discovery) read(ctx context.Context, p *Prober) (int, error) {
	d.at = d.now()
	// The reading is shared: a scraper that hangs up must not fail it for the others.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sdLoadTimeout)
	defer cancel()
	groups, err := d.Load(ctx)
	if err != nil && !errors.Is(err, fleet.ErrNoHost) {
		d.cached = textReply(statusInternalError, "reading the inventory: "+err.Error())
		return 0, err
	}
	kept, refused := AdmittedTargets(p, groups)
	if list := strings.Join(refused, ", "); list != d.refused {
		d.refused = list
		if list != "" && d.LeftOut != nil {
			d.LeftOut(refused)
		}
	}
	body, err := json.Marshal(kept)
	if err != nil {
		d.cached = textReply(statusInternalError, err.Error())
		return 0, err
	}
	d.cached = reply{status: statusOK, contentType: "application/json", body: append(body, '\n')}
	n := 0
	for _, g := range kept {
		n += len(g.Targets)
	}
	return n, nil
}

// AdmittedTargets keeps the target groups whose targets p's /probe would
// collect (a nil p admits none) and names the targets it left out. The
// result is never nil: an empty list is "[]" in JSON, which http_sd wants.
func AdmittedTargets(p *Prober, groups []fleet.TargetGroup) (kept []fleet.TargetGroup, refused []string) {
	kept = []fleet.TargetGroup{}
	for _, g := range groups {
		var targets []string
		for _, spec := range g.Targets {
			if p != nil {
				if _, _, err := p.admit(spec); err == nil {
					targets = append(targets, spec)
					continue
				}
			}
			refused = append(refused, spec)
		}
		if len(targets) > 0 {
			kept = append(kept, fleet.TargetGroup{Targets: targets, Labels: g.Labels})
		}
	}
	return kept, refused
}
