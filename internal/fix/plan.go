package fix

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Item is one action of a plan and the findings that asked for it.
type Item struct {
	Findings    []finding.ID   `json:"findings"`
	Description string         `json:"description"` // the finding's verb phrase
	Action      finding.Action `json:"action"`
	rem         remedy.Remedy  // built from Action
	Step        Step           `json:"step"`
}

// Manual is a fix without an Action: wgperf can only show its commands.
type Manual struct {
	Finding finding.ID  `json:"finding"`
	Fix     finding.Fix `json:"fix"`
}

// Plan is everything "wgperf fix" would do on one host, read but not applied.
type Plan struct {
	Host     string          `json:"host"`
	Platform remedy.Platform `json:"platform"`
	Kernel   string          `json:"kernel"`
	Items    []Item          `json:"items"`
	Manual   []Manual        `json:"manual,omitempty"`
}

// MarshalJSON writes empty lists as [], never null.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	q := plain(p)
	if q.Items == nil {
		q.Items = []Item{}
	}
	return json.Marshal(q)
}

// Select turns findings' fixes into plan items: one per distinct action (the
// first fix with an Action of each finding), in finding order. only, when not
// empty, keeps the findings with those IDs; an unknown ID is a
// *NoSuchFindingError so a typo does not silently plan nothing.
func Select(fs []finding.Finding, only []finding.ID) ([]Item, []Manual, error) {
	want := map[finding.ID]bool{}
	for _, id := range only {
		want[finding.ID(strings.TrimSpace(string(id)))] = true
	}
	seen := map[finding.ID]bool{}
	for _, f := range fs {
		seen[f.ID] = true
	}
	for _, id := range sortedKeys(want) {
		if !seen[id] {
			return nil, nil, &NoSuchFindingError{ID: id, Found: sortedKeys(seen)}
		}
	}
	var items []Item
	var manual []Manual
	byKey := map[string]int{}
	for _, f := range fs {
		if len(want) > 0 && !want[f.ID] {
			continue
		}
		for _, fx := range f.Fixes {
			if fx.Action == nil {
				if len(fx.Commands) > 0 || len(fx.Config) > 0 {
					manual = append(manual, Manual{Finding: f.ID, Fix: fx})
				}
				continue
			}
			rem, err := remedy.Parse(*fx.Action)
			if err != nil {
				return nil, nil, fmt.Errorf("finding %s: %w", f.ID, err)
			}
			key := actionKey(*fx.Action)
			if i, ok := byKey[key]; ok {
				if !slices.Contains(items[i].Findings, f.ID) {
					items[i].Findings = append(items[i].Findings, f.ID)
				}
				break
			}
			byKey[key] = len(items)
			items = append(items, Item{Findings: []finding.ID{f.ID}, Description: fx.Description, Action: *fx.Action, rem: rem})
			break
		}
	}
	return items, manual, nil
}

func actionKey(a finding.Action) string {
	b, _ := json.Marshal(a) // map keys marshal sorted
	return string(b)
}

func sortedKeys(m map[finding.ID]bool) []finding.ID {
	k := make([]finding.ID, 0, len(m))
	for id := range m {
		k = append(k, id)
	}
	slices.Sort(k)
	return k
}

// MakePlan reads the host and plans every item in order, each one seeing the
// files the earlier ones would write. It changes nothing.
func MakePlan(ctx context.Context, env *Env, items []Item, manual []Manual) (*Plan, error) {
	p := &Plan{Host: env.T.String(), Platform: env.Platform, Kernel: env.Kernel, Manual: manual}
	penv := env.Env.Fresh()
	for _, it := range items {
		if it.rem == nil {
			r, err := remedy.Parse(it.Action)
			if err != nil {
				return nil, err
			}
			it.rem = r
		}
		st, err := it.rem.Plan(ctx, penv)
		if err != nil {
			return nil, fmt.Errorf("plan %s: %w", it.Action.Kind, err)
		}
		it.Step = st
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// Pending counts the items that would change something.
func (p *Plan) Pending() int {
	n := 0
	for _, it := range p.Items {
		if !it.Step.Done {
			n++
		}
	}
	return n
}
