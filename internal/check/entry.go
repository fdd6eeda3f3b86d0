package check

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Entry is everything wgperf knows about one finding ID: its catalog entry
// (what it is called and why it matters, its severities and cases, what
// drives doctor's ranking and plan), what reports it, the remedies its
// findings may carry and an example of its fix. Catalog holds one per ID;
// checks, probes, doctor, the lab's scenarios, "wgperf explain", the docs
// pages and the JSON schema's ID list all read it, and its test holds every
// field to what the code does.
type Entry struct {
	// ID is the catalog entry this one adds to: the area files (catalog_AREA.go)
	// name it, and Catalog fills the embedded catalog.Entry from it.
	ID finding.ID
	catalog.Entry
	// What reports it: its per-host check, its cross-host check, the probes
	// and doctor's own analyses that report it, in their own words; at least
	// one. The package that builds its findings declares it (its Raises),
	// and TestRaises (internal/catalog) holds the declarations to the code.
	Check  *Check
	Cross  *CrossCheck
	Probes []Source
	// Remedies are the fix kinds its findings may carry, each with the values
	// its params may take (Allows): a findings file asking for anything else
	// asks for what wgperf would not propose.
	Remedies []Remedy
	// Example is its fix on a described host, built by the constructors the
	// checks use (for exampleHost): "wgperf fix" computes the real values.
	Example Example
}

// Example is a finding's fix on one described host.
type Example struct {
	Host  string // the situation the fixes are written for
	Fixes func() []finding.Fix
}

// Remedy is one fix kind an entry's findings may carry, with the values each
// of its params may take; a param it does not list is not allowed.
type Remedy struct {
	Kind   string
	Params map[string]Values
}

// Values are what one param of a remedy may be: a form any host allows, and
// with On a rule the host as it is now must meet (AllowsOn).
type Values struct {
	what     string // for messages: "one of a, b", "a whole number in [1, 2]"
	optional bool
	match    func(string) bool
	host     HostRule
}

// OneOf allows exactly these values.
func OneOf(values ...string) Values {
	return Values{what: "one of " + strings.Join(values, ", "), match: func(s string) bool { return slices.Contains(values, s) }}
}

// Between allows a whole number in [lo, hi].
func Between(lo, hi int64) Values {
	return Values{what: fmt.Sprintf("a whole number in [%d, %d]", lo, hi), match: func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == s && n >= lo && n <= hi
	}}
}

// Triple allows "min default max" (tcp_rmem, tcp_wmem): three whole numbers,
// each at least the one before, the max a multiple of unit in [lo, hi].
func Triple(lo, hi, unit int64) Values {
	return Values{what: fmt.Sprintf(`"min default max" with max a multiple of %d in [%d, %d]`, unit, lo, hi), match: func(s string) bool {
		f := strings.Fields(s)
		if len(f) != 3 {
			return false
		}
		var n [3]int64
		for i, x := range f {
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil || v < 0 || (i > 0 && v < n[i-1]) {
				return false
			}
			n[i] = v
		}
		return n[2] >= lo && n[2] <= hi && n[2]%unit == 0
	}}
}

// BaseOrDouble allows base, or twice a whole number of at least from, up to
// hi: what a check that raises a limit to base, or doubles one of at least
// from, can propose.
func BaseOrDouble(base, from, hi int64) Values {
	return Values{what: fmt.Sprintf("%d, or an even number in [%d, %d]", base, 2*from, hi), match: func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == s && (n == base || n%2 == 0 && n >= 2*from && n <= hi)
	}}
}

// Mbit allows a tc rate in whole Mbit/s ("150mbit") in [lo, hi].
func Mbit(lo, hi int64) Values {
	return Values{what: fmt.Sprintf(`a rate "Nmbit" with N in [%d, %d]`, lo, hi), match: func(s string) bool {
		n, ok := strings.CutSuffix(s, "mbit")
		v, err := strconv.ParseInt(n, 10, 64)
		return ok && err == nil && strconv.FormatInt(v, 10) == n && v >= lo && v <= hi
	}}
}

// Named allows any value the remedy kind's own validation accepts: names,
// addresses and rule texts of the host, which no catalog can list.
func Named(what string) Values {
	return Values{what: what, match: func(string) bool { return true }}
}

// Either allows what a or b allows.
func Either(a, b Values) Values {
	return Values{what: a.what + ", or " + b.what, match: func(s string) bool { return a.match(s) || b.match(s) }}
}

// On adds a rule the host as it is now must meet (AllowsOn).
func (v Values) On(rule HostRule) Values {
	v.host = rule
	return v
}

// Optional allows the param to be absent.
func (v Values) Optional() Values {
	v.optional = true
	return v
}

func (v Values) String() string { return v.what }

// Allows reports whether a finding of this entry may carry the action: a
// kind among its Remedies, every param listed and in range, every required
// param present. The error says what is not allowed, in one line.
func (e Entry) Allows(a finding.Action) error {
	i := slices.IndexFunc(e.Remedies, func(r Remedy) bool { return r.Kind == a.Kind })
	if i < 0 {
		var kinds []string
		for _, r := range e.Remedies {
			kinds = append(kinds, r.Kind)
		}
		if len(kinds) == 0 {
			return fmt.Errorf("%s has no automatic fix, not %q", e.ID, a.Kind)
		}
		return fmt.Errorf("%s is fixed by %s, not %q", e.ID, strings.Join(kinds, ", "), a.Kind)
	}
	r := e.Remedies[i]
	for _, k := range sortedKeys(a.Params) {
		v, ok := r.Params[k]
		if !ok {
			return fmt.Errorf("%s: %s takes no param %q", e.ID, a.Kind, k)
		}
		if !v.match(a.Params[k]) {
			return fmt.Errorf("%s: %s %s=%q: want %s", e.ID, a.Kind, k, a.Params[k], v)
		}
	}
	for _, k := range sortedKeys(r.Params) {
		if _, ok := a.Params[k]; !ok && !r.Params[k].optional {
			return fmt.Errorf("%s: %s needs param %q", e.ID, a.Kind, k)
		}
	}
	// Checks write an action as its remedy does (rem.Params()): one in
	// another form (a param the kind ignores, a number with a sign) is not
	// one of theirs.
	rem, err := remedy.Parse(a)
	if err != nil {
		return fmt.Errorf("%s: %v", e.ID, err)
	}
	if want := rem.Params(); !maps.Equal(want, a.Params) {
		return fmt.Errorf("%s: %s %s: wgperf writes this fix as %s", e.ID, a.Kind, paramText(a.Params), paramText(want))
	}
	return nil
}

// paramText is params as "k=v k=v", sorted, values quoted.
func paramText(p map[string]string) string {
	var b strings.Builder
	for i, k := range sortedKeys(p) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", k, p[k])
	}
	return b.String()
}
