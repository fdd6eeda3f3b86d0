// Package remedy is the one definition of every change wgperf suggests or
// makes. A typed constructor (Sysctl, WGMTU, MSSClamp, Congestion, ...)
// validates its parameters and returns a Remedy that knows the commands a
// person would run, the configuration that makes it persistent, the
// finding.Action that names it in JSON, and the plan (with its undo) that
// "wgperf fix" applies. Checks and probes call the constructors; package fix
// turns a finding's Action back into the same value with Parse.
//
// Planning only reads the host; nothing here changes one.
package remedy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Remedy is one change wgperf can show, apply and undo.
type Remedy interface {
	Kind() string              // one of the Kind* constants, each beside its constructor
	Describe() string          // one line: what and why
	Params() map[string]string // the finding.Action params Parse reads back
	Commands() []string        // shell lines a person runs for the runtime change
	Config() []finding.ConfigSnippet
	// Plan looks at the host through env and returns the Step that would bring
	// it to the wanted state (Done when it is already there).
	Plan(ctx context.Context, env *Env) (Step, error)
}

// Fix is r as a finding's fix: description is the verb phrase shown to people.
func Fix(description string, r Remedy) finding.Fix {
	return finding.Fix{
		Description: description,
		Commands:    r.Commands(),
		Config:      r.Config(),
		Action:      &finding.Action{Kind: r.Kind(), Params: r.Params()},
	}
}

// Fixes is r as a finding's fixes, or none when its constructor refused a
// value (err != nil): text from a snapshot or a probe never reaches a command
// unvalidated, and a finding without a fix still reports the problem.
func Fixes(description string, r Remedy, err error) []finding.Fix {
	if err != nil {
		return nil
	}
	return []finding.Fix{Fix(description, r)}
}

// planner is what every kind implements; shown adds the display.
type planner interface {
	Kind() string
	Describe() string
	Params() map[string]string
	Plan(ctx context.Context, env *Env) (Step, error)
}

// shown is a planner with the commands and config a constructor rendered for
// the host it was built for.
type shown struct {
	planner
	cmds []string
	cfg  []finding.ConfigSnippet
}

func (s shown) Commands() []string              { return s.cmds }
func (s shown) Config() []finding.ConfigSnippet { return s.cfg }

// Parse builds the Remedy a finding's Action names, through the same
// constructor a check or probe uses, so it validates the same way.
func Parse(a finding.Action) (Remedy, error) {
	p := params(a.Params)
	parse, ok := parsers[a.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown fix action %q", a.Kind)
	}
	r, err := parse(p)
	if err != nil {
		return nil, fmt.Errorf("fix action %s: %w", a.Kind, err)
	}
	return r, nil
}

// parsers read each kind's params; Kinds lists their keys.
var parsers = map[string]func(params) (Remedy, error){
	KindSysctl:           parseSysctl,
	KindCongestion:       parseCongestion,
	KindWGMTU:            parseWGMTU,
	KindMSSClamp:         parseMSSClamp,
	KindNoTrack:          parseNotrack,
	KindEndpointRoute:    parseEndpointRoute,
	KindICMPLimit:        parseICMPLimit,
	KindRPS:              parseRPS,
	KindBondHash:         parseBondHash,
	KindTBFCap:           parseTBF,
	KindSQM:              parseSQM,
	KindUCISet:           parseUCISet,
	KindPMTUDAllow:       parsePMTUDAllow,
	KindOffload:          parseOffload,
	KindIRQAffinity:      parseIRQAffinity,
	KindWGListenPort:     parseWGListenPort,
	KindWGPeerEndpoint:   parseWGPeerEndpoint,
	KindWGPeerKeepalive:  parseWGPeerKeepalive,
	KindWGPortMove:       parseWGPortMove,
	KindECMP:             parseECMP,
	KindConntrackBuckets: parseConntrackBuckets,
}

// Kinds lists every action kind Parse accepts, sorted.
func Kinds() []string {
	k := make([]string, 0, len(parsers))
	for kind := range parsers {
		k = append(k, kind)
	}
	slices.Sort(k)
	return k
}

type params map[string]string

// get returns a required param.
func (p params) get(key string) (string, error) {
	v := strings.TrimSpace(p[key])
	if v == "" {
		return "", fmt.Errorf("missing param %q", key)
	}
	return v, nil
}

// gets returns required params, in the order asked.
func (p params) gets(keys ...string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		v, err := p.get(k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// int returns a required numeric param.
func (p params) int(key string) (int, error) {
	v, err := p.get(key)
	if err != nil {
		return 0, err
	}
	if !numberRE.MatchString(v) {
		return 0, fmt.Errorf("param %s=%q: want a number", key, v)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("param %s=%q: %w", key, v, err)
	}
	return n, nil
}

var (
	nftNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	numberRE  = regexp.MustCompile(`^[0-9]{1,9}$`)
	hexMaskRE = regexp.MustCompile(`^[0-9a-fA-F][0-9a-fA-F,]{0,63}$`)
	wordRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]*$`)
)

// checkIface validates a network interface name as the kernel would accept
// it, and refuses a leading "-" that a command would read as an option
// (shell.Iface's grammar).
func checkIface(what, name string) error {
	if shell.Iface(name) != nil {
		return fmt.Errorf("%s %q is not a valid interface name", what, name)
	}
	return nil
}

// uciSectionOf is the uci section that configures device: section when it is
// given (it must be one), or the device's own name when that can be a uci
// section ("wg0"; not "wg-site", which uci would refuse), else "" (none).
func uciSectionOf(device, section string) (string, error) {
	if section != "" {
		return section, shell.UCISection(section)
	}
	if shell.UCISection(device) == nil {
		return device, nil
	}
	return "", nil
}

// checkText refuses control characters (newlines above all: they would end a
// comment in a printed script), invalid UTF-8 and space at either end (params
// are read back trimmed) in a free-form value.
func checkText(what, s string) error {
	if s == "" || len(s) > 256 || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 || strings.TrimSpace(s) != s {
		return fmt.Errorf("%s %q: want 1..256 printable characters, no space at either end", what, s)
	}
	return nil
}
