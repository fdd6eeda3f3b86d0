// Package fix turns findings into changes on a host and takes them back:
// every action reads the current state, plans the exact commands and file
// edits (runtime change plus persistent config for generic Linux, wg-quick or
// OpenWrt), and records the previous state so a journal on the target can
// restore it exactly — by "wgperf fix rollback", or by a plain-shell watchdog
// when a change is not confirmed in time.
//
// Nothing here changes a host except Apply, Rollback and the watchdog.
package fix

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// Action is one change wgperf knows how to make and undo.
//
// Plan only reads: it looks at the host through env and returns the Step that
// would bring it to the wanted state (Done when it is already there). Applying
// and reverting are the same for every kind — run the commands and write the
// files, or run the undo commands and put the old files back — because a
// Step's saved state is always plain shell lines plus previous file contents.
// That is also what lets a watchdog on a host without wgperf revert it.
type Action interface {
	Kind() string
	Describe() string // one line: what and why
	Plan(ctx context.Context, env *Env) (Step, error)
}

// Step is a planned change with everything needed to undo it.
type Step struct {
	Kind    string   `json:"kind"`
	Summary string   `json:"summary"`         // what changes, with the value seen now
	Done    bool     `json:"done,omitempty"`  // already in place: nothing to do
	Notes   []string `json:"notes,omitempty"` // e.g. what is not made persistent
	// Commands are shell lines run in order on the target after Files are written.
	Commands []string     `json:"commands,omitempty"`
	Files    []FileChange `json:"files,omitempty"`
	// Undo are shell lines that restore the runtime state; files are restored
	// from FileChange.Old afterwards.
	Undo []string `json:"undo,omitempty"`
}

// FileChange is one file written by a step, with its previous content.
type FileChange struct {
	Path    string `json:"path"` // as seen on the target (Root applied)
	Existed bool   `json:"existed"`
	Old     []byte `json:"old,omitempty"`
	New     []byte `json:"new"`
	Mode    uint32 `json:"mode"`
	// Edit, when set, are shell lines that make the same edit in place; the
	// printed script uses them instead of the whole file (which may hold keys).
	Edit []string `json:"edit,omitempty"`
}

// merge appends b to s: commands in order, undo in reverse order, and one
// FileChange per path (the first Old, the last New).
func (s *Step) merge(b Step) {
	s.Commands = append(s.Commands, b.Commands...)
	s.Undo = append(append([]string{}, b.Undo...), s.Undo...)
	s.Notes = append(s.Notes, b.Notes...)
	for _, f := range b.Files {
		merged := false
		for i := range s.Files {
			if s.Files[i].Path == f.Path {
				s.Files[i].New = f.New
				s.Files[i].Edit = append(s.Files[i].Edit, f.Edit...)
				merged = true
			}
		}
		if !merged {
			s.Files = append(s.Files, f)
		}
	}
}

// New builds the Action a finding's fix names, validating its params.
func New(a finding.Action) (Action, error) {
	p := params(a.Params)
	var (
		act Action
		err error
	)
	switch a.Kind {
	case finding.ActSysctl:
		act, err = newSysctl(p)
	case finding.ActCongestion:
		act, err = newCongestion(p)
	case finding.ActWGMTU:
		act, err = newWGMTU(p)
	case finding.ActMSSClamp:
		act, err = newMSSClamp(p)
	case finding.ActNoTrack:
		act, err = newNoTrack(p)
	case finding.ActEndpointRoute:
		act, err = newEndpointRoute(p)
	case finding.ActICMPLimit:
		act, err = newICMPLimit(p)
	case finding.ActRPS:
		act, err = newRPS(p)
	case finding.ActBondHash:
		act, err = newBondHash(p)
	case finding.ActTBFCap:
		act, err = newTBFCap(p)
	case finding.ActUCISet:
		act, err = newUCISet(p)
	default:
		return nil, fmt.Errorf("unknown fix action %q", a.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("fix action %s: %w", a.Kind, err)
	}
	return act, nil
}

// Kinds lists every action kind New accepts.
func Kinds() []string {
	k := []string{finding.ActSysctl, finding.ActCongestion, finding.ActWGMTU, finding.ActMSSClamp,
		finding.ActNoTrack, finding.ActEndpointRoute, finding.ActICMPLimit, finding.ActRPS,
		finding.ActBondHash, finding.ActTBFCap, finding.ActUCISet}
	sort.Strings(k)
	return k
}

type params map[string]string

var (
	ifaceRE    = regexp.MustCompile(`^[A-Za-z0-9_.@:-]{1,15}$`)
	sysctlRE   = regexp.MustCompile(`^[a-z0-9_]+(\.[A-Za-z0-9_.-]+)+$`)
	uciKeyRE   = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_@\[\]-]+\.[A-Za-z0-9_-]+$`)
	nftNameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	numberRE   = regexp.MustCompile(`^[0-9]+$`)
	hexMaskRE  = regexp.MustCompile(`^[0-9a-fA-F,]+$`)
	wordRE     = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
	initPathRE = regexp.MustCompile(`^/[A-Za-z0-9_./-]+$`)
)

// get returns a required param, checked against re.
func (p params) get(key string, re *regexp.Regexp) (string, error) {
	v := strings.TrimSpace(p[key])
	if v == "" {
		return "", fmt.Errorf("missing param %q", key)
	}
	if re != nil && !re.MatchString(v) {
		return "", fmt.Errorf("param %s=%q is not valid", key, v)
	}
	return v, nil
}

// opt returns an optional param, checked against re when present.
func (p params) opt(key string, re *regexp.Regexp) (string, error) {
	if strings.TrimSpace(p[key]) == "" {
		return "", nil
	}
	return p.get(key, re)
}
