// Package fleet diagnoses many hosts at once: it reads an inventory (a plain
// list of target specs, an Ansible INI file or an Ansible YAML file) and collects snapshots
// from the hosts in parallel, with a bound on concurrency and a per-host
// timeout. A host that does not answer is reported, never fatal.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/wgperf/wgperf/internal/target"
)

// Host is one machine named by an inventory.
type Host struct {
	Name   string      `json:"name"`             // the inventory's name for it (the spec itself on a plain list)
	Target target.Spec `json:"target"`           // target spec: local, netns:NAME, ssh:[user@]host[:port]
	Line   int         `json:"line,omitempty"`   // where the inventory first names it
	Groups []string    `json:"groups,omitempty"` // groups it is listed in (not their parents)
	// SSH holds the host's key, ssh options (a ProxyJump through a bastion)
	// and become, from the inventory's variables; validated.
	SSH target.HostSSH `json:"-"`
	// Opened, when set, is the host's target already open (HostOf): Open
	// returns it as it is.
	Opened target.Target `json:"-"`
}

// Open returns h's Target.
func (h Host) Open() (target.Target, error) {
	if h.Opened != nil {
		return h.Opened, nil
	}
	return h.Target.OpenWith(h.SSH)
}

// HostOf is the host of a target already open, collected as it is: its ssh
// settings (key, options, become) stay those it was opened with.
func HostOf(t target.Target) Host { return Host{Name: t.String(), Target: target.Of(t), Opened: t} }

// Inventory is a resolved inventory: its hosts in file order, and the
// variables it sets that wgperf does not use.
type Inventory struct {
	Hosts   []Host
	Ignored []string // sorted variable names
}

// LoadOptions tune Load.
type LoadOptions struct {
	// Limit keeps the hosts an Ansible --limit pattern selects: group or host
	// names, globs (web*), ~regex, "!" to exclude, "&" to intersect,
	// separated by "," or ":". "" keeps every host.
	Limit string
}

// ErrNoHost is what LoadAll's error is (errors.Is) when the inventory names
// no host or the limit selects none: an empty selection, which a caller
// serving the hosts (the exporter's /sd) answers with an empty list.
var ErrNoHost = errors.New("no host")

// noHostError is an ErrNoHost in words of its own.
type noHostError string

func (e noHostError) Error() string        { return string(e) }
func (e noHostError) Is(target error) bool { return target == ErrNoHost }

// Load reads the inventory at path (a file or a directory) with LoadAll.
func Load(ctx context.Context, path string, o LoadOptions) (*Inventory, error) {
	return LoadAll(ctx, []string{path}, o)
}

// LoadAll reads inventory sources as Ansible reads several -i: each a file
// or a directory, in the order given, into one inventory. A file comes with
// the group_vars/ and host_vars/ folders beside it, a directory with those
// inside it; a directory's entries are read in name order (sub-directories
// too), skipping what Ansible skips there (hidden names, group_vars,
// host_vars, vars_plugins, and the extensions of ignoredExts). A .yml, .yaml
// or .json file is an Ansible YAML inventory (JSON is YAML; the output of
// "ansible-inventory --list" is read too), anything else a list or INI
// inventory, as Ansible's inventory plugins pick by extension. Sources merge
// as Ansible merges them: a host or group named again gains the groups and
// children it is given, and a later source's variables win over an earlier
// one's for the same host or group (group_vars/ and host_vars/ likewise, in
// source order). The host cap (MaxHosts) and the work bound hold across all
// sources together. Then every host's variables resolve and the limit
// applies. Errors name the file and line; ctx ends a resolution that takes
// too long.
func LoadAll(ctx context.Context, paths []string, o LoadOptions) (*Inventory, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("inventory: no source given")
	}
	inv := newInventory(ctx)
	var varDirs []string
	for _, p := range paths {
		dir, err := inv.source(p)
		if err != nil {
			return nil, err
		}
		if dir != "" && !contains(varDirs, dir) {
			varDirs = append(varDirs, dir)
		}
	}
	for _, dir := range varDirs {
		if err := inv.readVarDirs(dir); err != nil {
			return nil, err
		}
	}
	out, err := inv.resolve()
	if err != nil {
		if len(inv.files) == 1 {
			return nil, fmt.Errorf("%s: %w", inv.files[0], err)
		}
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if o.Limit != "" {
		if out.Hosts, err = inv.limit(out.Hosts, o.Limit); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadInventory is Load without a limit, returning the hosts.
func ReadInventory(path string) ([]Host, error) {
	inv, err := Load(context.Background(), path, LoadOptions{})
	if err != nil {
		return nil, err
	}
	return inv.Hosts, nil
}

// ParseInventory reads hosts, one per line, in either of two forms that may
// be mixed:
//
//   - a target spec: "local", "netns:NAME", "ssh:[user@]host[:port]";
//   - an Ansible INI host line: "name [key=value ...]", read as
//     ssh:[ansible_user@](ansible_host|name)[:ansible_port] ("name" may carry
//     ":port" and a range, web[01:20]); ansible_connection=local makes it "local".
//
// "[group]" starts a section of host lines, "[group:vars]" holds key=value
// lines for the hosts of the group (and of its children), "[group:children]"
// names child groups; "[all:vars]" applies to every host. Variables resolve
// as Ansible resolves them (resolve). "#" and ";" start comments. A host
// listed twice (by name or by resulting target) is kept once, at its first
// line. Errors name the line.
func ParseInventory(r io.Reader) ([]Host, error) {
	inv := newInventory(context.Background())
	if err := inv.read(r); err != nil {
		return nil, err
	}
	out, err := inv.resolve()
	if err != nil {
		return nil, err
	}
	return out.Hosts, nil
}

type group struct {
	vars     map[string]string // from the inventory file
	fileVars map[string]string // from group_vars/
	children []string
	parents  []string
	depth    int // longest path from "all"; -1 until computed
}

type hostEntry struct {
	name     string
	file     string // the inventory file that named it first ("" when parsed from a reader)
	line     int
	vars     map[string]string // host variables from the inventory file
	fileVars map[string]string // from host_vars/
	groups   []string
	spec     bool // the name is a target spec, not an Ansible host
	// merged are the variables as resolved, set by ansible-inventory --list
	// output (which has resolved them already).
	merged map[string]string
}

type inventory struct {
	ctx    context.Context
	groups map[string]*group
	hosts  []*hostEntry
	byName map[string]*hostEntry
	listed bool // the file read last is an ansible-inventory --list: its variables come resolved
	// files are the inventory files read, in order; file the one being read.
	files []string
	file  string
	// named counts the host names given so far, ranges expanded (MaxHosts);
	// work the variables copied and group memberships listed (maxWork).
	named, work int
	// bytes counts the bytes of inventory and variable files read
	// (maxReadBytes), entries the directory entries listed (maxDirEntries),
	// dirs the directories read (each once; bounds.go).
	bytes   int64
	entries int
	dirs    []os.FileInfo
}

func newInventory(ctx context.Context) *inventory {
	return &inventory{ctx: ctx, groups: map[string]*group{}, byName: map[string]*hostEntry{}}
}

func (inv *inventory) group(name string) *group {
	g := inv.groups[name]
	if g == nil {
		g = &group{vars: map[string]string{}, depth: -1}
		inv.groups[name] = g
	}
	return g
}

// addChild records parent -> child once.
func (inv *inventory) addChild(parent, child string) {
	p, c := inv.group(parent), inv.group(child)
	if !contains(p.children, child) {
		p.children = append(p.children, child)
		c.parents = append(c.parents, parent)
	}
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
