// Package cli is the command line's plumbing, shared by every command of
// cmd/wgperf: flag values that refuse nonsense as they are parsed or before
// a command runs (CheckFlags), time flags that take a Go duration or a bare
// number, flags of a few words, and shell completion of what flags take.
package cli

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag values that parse but mean nothing are refused before a command runs
// (exit 3), instead of turning into a local target, an unarmed watchdog or
// an overflowing bandwidth-delay product.
var (
	// targetFlags name a host; an empty value would silently mean this machine.
	targetFlags = map[string]bool{"host": true, "client": true, "server": true, "peer": true}
	// positiveDurations make no sense at zero or below.
	positiveDurations = map[string]bool{"confirm": true, "rtt": true, "host-timeout": true, "interval": true}
	// maxRateMbit bounds rate flags (Mbit/s): 10 Tbit/s is beyond any link.
	maxRateMbit = 1e7
	// maxDurations bound times whose larger values mean nothing: a path RTT
	// beyond 10 s (geostationary satellite is 0.6 s, a badly bloated mobile
	// link a few seconds) is a typo, and 2562047h made a buffer of 2^61 bytes.
	maxDurations = map[string]time.Duration{"rtt": 10 * time.Second}
)

// CheckFlags checks every flag given on the command line (a command's
// PersistentPreRunE): the first bad one is its error.
func CheckFlags(cmd *cobra.Command, _ []string) error {
	var first error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err := checkFlag(f); err != nil && first == nil {
			first = err
		}
	})
	return first
}

func checkFlag(f *pflag.Flag) error {
	if r, ok := f.Value.(ranged); ok {
		if err := r.inRange(f.Name); err != nil {
			return err
		}
	}
	switch v := f.Value.(type) {
	case pflag.SliceValue:
		if targetFlags[f.Name] {
			for _, s := range v.GetSlice() {
				if s == "" {
					return fmt.Errorf("--%s '': empty target (use --%s local for this machine)", f.Name, f.Name)
				}
			}
		}
		return nil
	}
	switch f.Value.Type() {
	case "string":
		if targetFlags[f.Name] && f.Value.String() == "" {
			return fmt.Errorf("--%s '': empty target (use --%s local for this machine)", f.Name, f.Name)
		}
	case "duration":
		d, err := time.ParseDuration(f.Value.String())
		if err == nil && positiveDurations[f.Name] && d <= 0 {
			return fmt.Errorf("--%s %s: want a positive duration (e.g. 60s)", f.Name, f.Value)
		}
		if limit, ok := maxDurations[f.Name]; ok && err == nil && d > limit {
			return fmt.Errorf("--%s %s: want at most %s", f.Name, f.Value, limit)
		}
	case "float64":
		// NaN, Inf and 1e20 parse as floats; in the BDP maths they overflow or
		// compare false and silently drop a finding.
		r, err := strconv.ParseFloat(f.Value.String(), 64)
		if f.Name == "path-loss" {
			if err != nil || math.IsNaN(r) || r < 0 || r > 100 {
				return fmt.Errorf("--%s %s: want a percentage from 0 to 100", f.Name, f.Value)
			}
			return nil
		}
		low := 0.0 // --udp 0: no UDP test
		if f.Name == "rate" {
			low = math.SmallestNonzeroFloat64
		}
		if err != nil || math.IsNaN(r) || math.IsInf(r, 0) || r < low || r > maxRateMbit {
			return fmt.Errorf("--%s %s: want a rate in Mbit/s above 0 and at most %.0f", f.Name, f.Value, maxRateMbit)
		}
	}
	return nil
}

// ranged is a flag value that holds its own range; CheckFlags asks it.
type ranged interface {
	inRange(name string) error // one line naming the flag and the range
}

// unitValue is a length of time kept as a whole number of unit (seconds,
// milliseconds) that reads like every other time flag: a Go duration
// ("10s", "6ms") or, as before, a bare number in unit ("10"). With hi > 0 it
// holds to lo..hi units.
type unitValue struct {
	p      *int
	unit   time.Duration
	lo, hi int
}

func (v unitValue) inRange(name string) error {
	if v.hi > 0 && (*v.p < v.lo || *v.p > v.hi) {
		return fmt.Errorf("--%s %d: want %d..%d seconds", name, *v.p, v.lo, v.hi)
	}
	return nil
}

// intValue is a whole number held to lo..hi.
type intValue struct {
	p      *int
	lo, hi int
}

func (v intValue) String() string { return strconv.Itoa(*v.p) }
func (v intValue) Type() string   { return "int" }
func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q: want a whole number", s)
	}
	*v.p = n
	return nil
}

func (v intValue) inRange(name string) error {
	if *v.p < v.lo || *v.p > v.hi {
		return fmt.Errorf("--%s %d: want %d..%d", name, *v.p, v.lo, v.hi)
	}
	return nil
}

// IntFlag defines a whole-number flag held to lo..hi.
func IntFlag(f *pflag.FlagSet, p *int, name string, def, lo, hi int, usage string) {
	*p = def
	f.Var(intValue{p, lo, hi}, name, usage)
}

func (v unitValue) String() string { return (time.Duration(*v.p) * v.unit).String() }
func (v unitValue) Type() string   { return "duration" }
func (v unitValue) Set(s string) error {
	n, err := parseDuration(s, v.unit)
	if err != nil {
		return err
	}
	*v.p = int((n + v.unit - 1) / v.unit)
	return nil
}

// parseDuration reads a Go duration, or a bare number in unit.
func parseDuration(s string, unit time.Duration) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || math.IsNaN(n) || math.IsInf(n, 0) || n > 1e6 {
			return 0, fmt.Errorf("%q: want a duration such as 10s", s)
		}
		return time.Duration(n * float64(unit)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration such as 10s", s)
	}
	return d, nil
}

// SecondsFlag defines a time flag kept in whole seconds.
func SecondsFlag(f *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	f.Var(unitValue{p: p, unit: time.Second}, name, usage)
}

// RunSecondsFlag is a time flag of measuring runs: 1 to 60 whole seconds.
func RunSecondsFlag(f *pflag.FlagSet, p *int, name string, def int, usage string) {
	*p = def
	f.Var(unitValue{p: p, unit: time.Second, lo: 1, hi: 60}, name, usage)
}

// AliasFlag makes old an accepted, hidden spelling of a renamed flag.
func AliasFlag(f *pflag.FlagSet, old, name string) {
	f.AddFlag(&pflag.Flag{Name: old, Usage: "same as --" + name, Value: f.Lookup(name).Value, Hidden: true})
}

// OneDefault keeps one default per flag in help: a flag whose usage says its
// default itself (one that depends on --quick, a lab or wg show) gets no
// second "(default X)" from pflag, which prints its value unless it is the
// type's zero.
func OneDefault(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Usage, "(default") {
			f.DefValue = zeroDefault[f.Value.Type()]
		}
	})
	for _, sub := range c.Commands() {
		OneDefault(sub)
	}
}

// zeroDefault is a DefValue pflag takes for "no default", by value type,
// for its own values and ours alike ("0" is a zero duration for both); any
// other type's is "".
var zeroDefault = map[string]string{"bool": "false", "duration": "0", "int": "0", "float64": "0", "stringSlice": "[]"}

// enumValue is a flag that takes one of a few words: it refuses any other in
// one line as it is parsed, and completion offers the words (a flag value
// with Words, AddCompletions).
type enumValue struct {
	p     *string
	words []string
}

// EnumFlag defines a flag of words, starting at def.
func EnumFlag(f *pflag.FlagSet, p *string, name, def string, words []string, usage string) {
	*p = def
	f.Var(enumValue{p: p, words: words}, name, usage)
}

func (v enumValue) String() string  { return *v.p }
func (v enumValue) Type() string    { return "string" }
func (v enumValue) Words() []string { return v.words }
func (v enumValue) Set(s string) error {
	if !slices.Contains(v.words, s) {
		return fmt.Errorf("%q: want %s", s, orList(v.words))
	}
	*v.p = s
	return nil
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// UnitFlag defines a time flag kept in whole units (time.Millisecond: a
// bare number is milliseconds), starting at def.
func UnitFlag(f *pflag.FlagSet, p *int, name string, def int, unit time.Duration, usage string) {
	*p = def
	f.Var(unitValue{p: p, unit: unit}, name, usage)
}
