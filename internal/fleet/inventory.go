// Package fleet diagnoses many hosts at once: it reads an inventory (a plain
// list of target specs, an Ansible INI file or an Ansible YAML file) and collects snapshots
// from the hosts in parallel, with a bound on concurrency and a per-host
// timeout. A host that does not answer is reported, never fatal.
package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Host is one machine named by an inventory.
type Host struct {
	Name   string   `json:"name"`             // the inventory's name for it (the spec itself on a plain list)
	Target string   `json:"target"`           // target spec: local, netns:NAME, ssh:[user@]host[:port]
	Line   int      `json:"line,omitempty"`   // where the inventory first names it
	Groups []string `json:"groups,omitempty"` // groups it is listed in (not their parents)
	// SSH holds the host's key, ssh options (a ProxyJump through a bastion)
	// and become, from the inventory's variables; validated.
	SSH target.HostSSH `json:"-"`
}

// Open returns h's Target.
func (h Host) Open() (target.Target, error) { return target.ParseWith(h.Target, h.SSH) }

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

// ignoredExts are the endings of names an inventory directory's listing
// skips: ansible-core's INVENTORY_IGNORE_EXTS default (REJECT_EXTS, .orig,
// .cfg, .retry). Before ansible-core 2.19 it skipped .ini files too; wgperf
// reads them, as Ansible does now.
var ignoredExts = []string{".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry"}

// ignoredEntry says whether Ansible skips a directory entry of this name
// when the directory is an inventory source.
func ignoredEntry(name string) bool {
	if strings.HasPrefix(name, ".") || name == "group_vars" || name == "host_vars" || name == "vars_plugins" {
		return true
	}
	for _, ext := range ignoredExts {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// source reads one inventory source, a file or a directory, and returns
// the folder whose group_vars/ and host_vars/ go with it ("" for an
// ansible-inventory listing, whose variables come resolved).
func (inv *inventory) source(path string) (string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return path, inv.readDir(path, 0)
	}
	listed, err := inv.readFile(path)
	if err != nil || listed {
		return "", err
	}
	return filepath.Dir(path), nil
}

// readDir reads every inventory file under dir, in name order as Ansible
// lists it, depth directories below the source. A link is read as what it
// points to, as Ansible does, but a directory is read once: one reached
// again (a symbolic link back up, or two links to one directory) is an
// error, not a loop or a doubling; the walk is bounded in depth and entries
// (bounds.go).
func (inv *inventory) readDir(dir string, depth int) error {
	if err := inv.enterDir(dir, depth); err != nil {
		return err
	}
	entries, err := readDirNames(dir, maxDirEntries-inv.entries)
	if err != nil {
		return fmt.Errorf("inventory: %v", err)
	}
	for _, name := range entries {
		if err := inv.ctx.Err(); err != nil {
			return err
		}
		if err := inv.countEntry(dir); err != nil {
			return err
		}
		if err := inv.charge(1); err != nil {
			return fmt.Errorf("inventory: %s: %v", dir, err)
		}
		if ignoredEntry(name) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path) // a link is read as what it points to, as Ansible does
		if err != nil {
			return fmt.Errorf("inventory: %v", err)
		}
		switch {
		case fi.IsDir():
			err = inv.readDir(path, depth+1)
		case fi.Mode().IsRegular():
			_, err = inv.readFile(path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readFile reads one inventory file into inv and says whether it was an
// ansible-inventory listing. An executable file that starts with "#!" is
// an inventory script, which Ansible would run and wgperf refuses.
func (inv *inventory) readFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("inventory: %v", err)
	}
	defer f.Close()
	br := bufio.NewReader(inv.bounded(f, path))
	if fi, err := f.Stat(); err == nil && fi.Mode()&0o111 != 0 {
		if head, _ := br.Peek(2); string(head) == "#!" {
			return false, fmt.Errorf("%s: an inventory script: wgperf runs none (save its output, ansible-inventory -i %s --list > hosts.json, and read that)", path, path)
		}
	}
	inv.files = append(inv.files, path)
	inv.file = path
	inv.listed = false
	read := inv.read
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yml" || ext == ".yaml" || ext == ".json" {
		read = inv.readYAML
	}
	if err := read(br); err != nil {
		return false, fmt.Errorf("%s: %v", path, err)
	}
	return inv.listed, nil
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

func (inv *inventory) read(r io.Reader) error {
	section, kind := "ungrouped", "hosts"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := stripComment(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return fmt.Errorf("line %d: section header %q lacks its closing ]", n, line)
			}
			name := strings.TrimSpace(line[1 : len(line)-1])
			section, kind = name, "hosts"
			if i := strings.LastIndexByte(name, ':'); i >= 0 {
				section, kind = name[:i], name[i+1:]
				if kind != "vars" && kind != "children" {
					return fmt.Errorf("line %d: section [%s]: want [group], [group:vars] or [group:children]", n, name)
				}
			}
			if section == "" || strings.ContainsAny(section, " \t") {
				return fmt.Errorf("line %d: bad group name in [%s]", n, name)
			}
			inv.group(section)
			continue
		}
		switch kind {
		case "vars":
			k, v, ok := strings.Cut(line, "=")
			k, v = strings.TrimSpace(k), unquote(strings.TrimSpace(v))
			if !ok || k == "" {
				return fmt.Errorf("line %d: [%s:vars] wants key=value lines, got %q", n, section, line)
			}
			inv.group(section).vars[canonical(k)] = v
		case "children":
			if strings.ContainsAny(line, " \t=") {
				return fmt.Errorf("line %d: [%s:children] wants one group name per line, got %q", n, section, line)
			}
			if line == section {
				return fmt.Errorf("line %d: group %s is its own child", n, section)
			}
			inv.addChild(section, line)
		default:
			if err := inv.hostLine(n, section, line); err != nil {
				return fmt.Errorf("line %d: %v", n, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return nil
}

func (inv *inventory) hostLine(n int, section, line string) error {
	words, err := splitWords(line)
	if err != nil {
		return err
	}
	name, vars := words[0], map[string]string{}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return fmt.Errorf("host %s: want key=value after the host name, got %q", name, w)
		}
		vars[canonical(k)] = v
	}
	names, err := expandRange(inv.ctx, name, MaxHosts-inv.named)
	if err != nil {
		return fmt.Errorf("host %s: %v", name, err)
	}
	for _, h := range names {
		if err := inv.charge(len(vars)); err != nil {
			return err
		}
		hv := make(map[string]string, len(vars))
		for k, v := range vars {
			hv[k] = v
		}
		if err := inv.addHost(n, section, h, hv); err != nil {
			return err
		}
	}
	return nil
}

// addHost records a host of an INI line or a YAML hosts: entry.
func (inv *inventory) addHost(n int, section, name string, vars map[string]string) error {
	if inv.named++; inv.named > MaxHosts {
		return errTooManyHosts
	}
	if err := inv.charge(len(vars)); err != nil {
		return err
	}
	spec := target.IsSpec(name)
	if spec && len(vars) > 0 {
		return fmt.Errorf("%s is a target spec and takes no variables (write an Ansible host name to use them)", name)
	}
	if !spec {
		// Ansible reads "host:port" as host with a host variable ansible_port.
		if h, p, err := net.SplitHostPort(name); err == nil {
			if _, err := strconv.Atoi(p); err != nil {
				return fmt.Errorf("%q is neither a target (%s) nor an Ansible host[:port]", name, target.Syntax())
			}
			name = h
			if _, set := vars["ansible_port"]; !set {
				vars["ansible_port"] = p
			}
		}
	}
	h := inv.byName[name]
	if h == nil {
		h = &hostEntry{name: name, file: inv.file, line: n, vars: map[string]string{}, spec: spec}
		inv.byName[name] = h
		inv.hosts = append(inv.hosts, h)
	}
	for k, v := range vars {
		h.vars[k] = v
	}
	if err := inv.charge(len(h.groups)); err != nil {
		return err
	}
	if !contains(h.groups, section) {
		h.groups = append(h.groups, section)
		inv.group(section)
	}
	return nil
}

// resolve gives every host its variables as Ansible does, and its target.
// A host's groups are the ones it is listed in and all their ancestors, "all"
// included, ordered by depth (the longest path from "all"), then
// ansible_group_priority, then name; later ones win. In Ansible's default
// precedence the inventory file's group variables come first (in that
// order), then group_vars/all, then group_vars/ of the other groups (in
// that order), then the file's host variables, then host_vars/. Depths and
// ancestors are computed once per group, so nested :children diamonds cost
// their size, not their number of paths; a cycle is an error.
func (inv *inventory) resolve() (*Inventory, error) {
	if err := inv.computeDepths(); err != nil {
		return nil, err
	}
	ancestors := map[string][]string{}
	var tooMuch error // set once the ancestors' lists pass maxWork
	var ancestorsOf func(g string) []string
	ancestorsOf = func(g string) []string {
		if a, ok := ancestors[g]; ok || tooMuch != nil {
			return a
		}
		set := map[string]bool{g: true}
		for _, p := range inv.groups[g].parents {
			for _, a := range ancestorsOf(p) {
				set[a] = true
			}
		}
		// A chain of groups lists each group's ancestors again: charged.
		if tooMuch = inv.charge(len(set)); tooMuch != nil {
			return nil
		}
		out := keys(set)
		ancestors[g] = out
		return out
	}
	out := &Inventory{}
	ignored := map[string]bool{}
	seen := map[string]int{} // target spec -> index in out.Hosts
	for _, h := range inv.hosts {
		if err := inv.ctx.Err(); err != nil {
			return nil, err
		}
		var spec string
		var ssh target.HostSSH
		if h.spec {
			spec = h.name
		} else {
			vars := h.merged
			if vars == nil {
				set := map[string]bool{"all": true}
				for _, g := range h.groups {
					anc := ancestorsOf(g)
					if tooMuch != nil {
						return nil, tooMuch
					}
					if err := inv.charge(len(anc)); err != nil {
						return nil, err
					}
					for _, a := range anc {
						set[a] = true
					}
				}
				var err error
				if vars, err = inv.hostVars(h, inv.sortGroups(keys(set))); err != nil {
					return nil, err
				}
			}
			var used map[string]bool
			var err error
			if spec, ssh, used, err = hostSettings(h.name, vars); err != nil {
				return nil, fmt.Errorf("%s: host %s: %v", inv.where(h), h.name, err)
			}
			for k := range vars {
				if !used[k] && !internalVar[k] {
					ignored[k] = true
				}
			}
		}
		if _, err := target.ParseWith(spec, ssh); err != nil {
			return nil, fmt.Errorf("%s: %v", inv.where(h), err)
		}
		var groups []string
		for _, g := range h.groups {
			if g != "ungrouped" && g != "all" {
				groups = append(groups, g)
			}
		}
		if i, dup := seen[spec]; dup {
			for _, g := range groups {
				if !contains(out.Hosts[i].Groups, g) {
					out.Hosts[i].Groups = append(out.Hosts[i].Groups, g)
				}
			}
			continue
		}
		seen[spec] = len(out.Hosts)
		out.Hosts = append(out.Hosts, Host{Name: h.name, Target: spec, Line: h.line, Groups: groups, SSH: ssh})
	}
	if len(out.Hosts) == 0 {
		return nil, noHostError("the inventory names no host")
	}
	out.Ignored = keys(ignored)
	return out, nil
}

// where names the line that first names h: with several files read, the
// file too (with one, the caller names it).
func (inv *inventory) where(h *hostEntry) string {
	if len(inv.files) > 1 && h.file != "" {
		return fmt.Sprintf("%s: line %d", h.file, h.line)
	}
	return fmt.Sprintf("line %d", h.line)
}

// internalVar are variables Ansible sets itself in ansible-inventory's output.
var internalVar = map[string]bool{"inventory_file": true, "inventory_dir": true, "inventory_hostname": true,
	"inventory_hostname_short": true, "group_names": true, "groups": true, "playbook_dir": true, "ansible_group_priority": true}

// hostVars merges a host's variables in Ansible's default precedence;
// groups are sorted already. Every variable copied is charged first.
func (inv *inventory) hostVars(h *hostEntry, groups []string) (map[string]string, error) {
	n := len(inv.groups["all"].fileVars) + len(h.vars) + len(h.fileVars)
	for _, g := range groups {
		n += len(inv.groups[g].vars) + len(inv.groups[g].fileVars)
	}
	if err := inv.charge(n); err != nil {
		return nil, err
	}
	vars := make(map[string]string, n)
	merge := func(m map[string]string) {
		for k, v := range m {
			vars[k] = v
		}
	}
	for _, g := range groups {
		merge(inv.groups[g].vars)
	}
	merge(inv.groups["all"].fileVars)
	for _, g := range groups {
		if g != "all" {
			merge(inv.groups[g].fileVars)
		}
	}
	merge(h.vars)
	merge(h.fileVars)
	return vars, nil
}

// computeDepths sets every group's depth, the longest path to it from
// "all" (a group without parents hangs under "all"), each group visited once.
func (inv *inventory) computeDepths() error {
	inv.group("all")
	const visiting = -2
	var depth func(name string, path []string) error
	depth = func(name string, path []string) error {
		g := inv.groups[name]
		switch {
		case g.depth >= 0:
			return nil
		case g.depth == visiting:
			// path runs child to parent: print it parent to child, as :children reads.
			cycle := append(append([]string(nil), path[slices.Index(path, name):]...), name)
			slices.Reverse(cycle)
			return fmt.Errorf("groups form a cycle: %s", strings.Join(cycle, " → "))
		}
		if err := inv.ctx.Err(); err != nil {
			return err
		}
		g.depth = visiting
		d := 0
		if name != "all" {
			d = 1
			for _, p := range g.parents {
				if err := depth(p, append(path, name)); err != nil {
					return err
				}
				d = max(d, inv.groups[p].depth+1)
			}
		}
		g.depth = d
		return nil
	}
	for _, name := range sorted(keys(inv.groups)) {
		if err := depth(name, nil); err != nil {
			return err
		}
	}
	return nil
}

// sortGroups orders groups as Ansible merges them: by depth, then
// ansible_group_priority, then name.
func (inv *inventory) sortGroups(names []string) []string {
	prio := func(g string) int {
		v := inv.groups[g].vars["ansible_group_priority"]
		if fv, ok := inv.groups[g].fileVars["ansible_group_priority"]; ok {
			v = fv
		}
		p, err := strconv.Atoi(v)
		if err != nil {
			return 1
		}
		return p
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := inv.groups[names[i]], inv.groups[names[j]]
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		if pa, pb := prio(names[i]), prio(names[j]); pa != pb {
			return pa < pb
		}
		return names[i] < names[j]
	})
	return names
}

// hostSettings turns an Ansible host and its variables into a target spec
// and its ssh settings, and says which variables it used.
func hostSettings(name string, vars map[string]string) (string, target.HostSSH, map[string]bool, error) {
	used := map[string]bool{}
	get := func(k string) string {
		if _, ok := vars[k]; ok {
			used[k] = true
		}
		return vars[k]
	}
	var ssh target.HostSSH
	conn := get("ansible_connection")
	switch conn {
	case "local":
		return target.Local().String(), ssh, used, nil
	case "", "ssh", "smart", "paramiko":
	default:
		return "", ssh, nil, fmt.Errorf("ansible_connection=%s is not supported (wgperf reaches hosts with ssh or runs locally)", conn)
	}
	addr, port := name, ""
	if v := get("ansible_host"); v != "" {
		addr = v
	}
	if v := get("ansible_port"); v != "" {
		port = v
	}
	if port != "" {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", ssh, nil, fmt.Errorf("bad port %q", port)
		}
	}
	// An inventory is someone else's text: "-oProxyCommand=..." as a host or
	// user must never reach ssh.
	if err := shell.Host(addr); err != nil {
		return "", ssh, nil, fmt.Errorf("ansible_host: %v", err)
	}
	dial := target.SSHAddress{Host: addr}
	if u := get("ansible_user"); u != "" {
		if err := shell.User(u); err != nil || strings.Contains(u, "@") {
			return "", ssh, nil, fmt.Errorf("ansible_user %q: not a user name", u)
		}
		dial.User = u
	}
	if port != "" {
		dial.Port, _ = strconv.Atoi(port) // checked above
	}
	spec, err := dial.Spec()
	if err != nil {
		return "", ssh, nil, err
	}

	if key := get("ansible_ssh_private_key_file"); key != "" {
		if strings.HasPrefix(key, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				key = filepath.Join(home, key[2:])
			}
		}
		ssh.IdentityFile = key
	}
	for _, k := range []string{"ansible_ssh_common_args", "ansible_ssh_extra_args"} {
		opts, err := sshArgs(get(k))
		if err != nil {
			return "", ssh, nil, fmt.Errorf("%s: %v", k, err)
		}
		ssh.Options = append(ssh.Options, opts...)
	}
	if v := get("ansible_become"); v != "" {
		b, ok := ansibleBool(v)
		if !ok {
			return "", ssh, nil, fmt.Errorf("ansible_become=%q: want true or false", v)
		}
		ssh.Become = b
	}
	if ssh.Become {
		if m := get("ansible_become_method"); m != "" && m != "sudo" {
			return "", ssh, nil, fmt.Errorf("ansible_become_method=%s is not supported: wgperf becomes root with sudo -n (passwordless sudo)", m)
		}
		ssh.BecomeUser = get("ansible_become_user")
	}
	if err := target.CheckHostSSH(ssh); err != nil {
		return "", ssh, nil, err
	}
	return spec.String(), ssh, used, nil
}

// ansibleBool reads a boolean as Ansible does.
func ansibleBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1", "y", "t":
		return true, true
	case "false", "no", "off", "0", "n", "f":
		return false, true
	}
	return false, false
}

// sshArgs reads ansible_ssh_common_args (or _extra_args) into ssh -o
// settings: -o Key=Value (or "Key Value"), -J jumps, -p, -4, -6, -C. Anything
// else is refused, naming it; target.CheckHostSSH judges the settings.
func sshArgs(s string) ([]string, error) {
	words, err := splitWords(s)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		value := func(flag string) (string, error) {
			if len(w) > 2 {
				return w[2:], nil
			}
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s wants a value", flag)
			}
			i++
			return words[i], nil
		}
		switch {
		case strings.HasPrefix(w, "-o"):
			v, err := value("-o")
			if err != nil {
				return nil, err
			}
			k, val, ok := strings.Cut(v, "=")
			if !ok {
				k, val, ok = strings.Cut(strings.TrimSpace(v), " ")
			}
			if !ok {
				return nil, fmt.Errorf("-o %q: want Key=Value", v)
			}
			out = append(out, strings.TrimSpace(k)+"="+strings.TrimSpace(val))
		case strings.HasPrefix(w, "-J"):
			v, err := value("-J")
			if err != nil {
				return nil, err
			}
			out = append(out, "ProxyJump="+v)
		case strings.HasPrefix(w, "-p"):
			v, err := value("-p")
			if err != nil {
				return nil, err
			}
			out = append(out, "Port="+v)
		case w == "-4":
			out = append(out, "AddressFamily=inet")
		case w == "-6":
			out = append(out, "AddressFamily=inet6")
		case w == "-C":
			out = append(out, "Compression=yes")
		default:
			return nil, fmt.Errorf("ssh argument %q is not accepted (wgperf takes -o Key=Value, -J, -p, -4, -6 and -C from an inventory)", w)
		}
	}
	return out, nil
}

// stripComment drops a whole-line comment ("#" or ";") and an inline "#"
// comment that follows white space, as Ansible does.
func stripComment(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
		return ""
	}
	for i := 1; i < len(line); i++ {
		if line[i] == '#' && (line[i-1] == ' ' || line[i-1] == '\t') {
			return strings.TrimSpace(line[:i])
		}
	}
	return line
}

// splitWords splits a host line on white space, honouring single and double
// quotes (ansible_user="deploy bot" is one word; the quotes are removed).
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// canonical maps Ansible's older variable names to the current ones, so a
// host's ansible_ssh_user beats a group's ansible_user.
func canonical(key string) string {
	switch key {
	case "ansible_ssh_host":
		return "ansible_host"
	case "ansible_ssh_port":
		return "ansible_port"
	case "ansible_ssh_user":
		return "ansible_user"
	case "ansible_private_key_file":
		return "ansible_ssh_private_key_file"
	}
	return key
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
