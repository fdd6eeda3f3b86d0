package fleet

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// This file holds the resolution of an inventory read: group depths and
// order, every host's variables merged in Ansible's precedence, and its target.

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
	seen := map[target.Key]int{} // host -> index in out.Hosts
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
		parsed, err := target.ParseSpec(spec)
		if err == nil {
			_, err = parsed.OpenWith(ssh) // the ssh settings must suit the kind
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", inv.where(h), err)
		}
		var groups []string
		for _, g := range h.groups {
			if g != "ungrouped" && g != "all" {
				groups = append(groups, g)
			}
		}
		if i, dup := seen[parsed.Key()]; dup {
			for _, g := range groups {
				if !contains(out.Hosts[i].Groups, g) {
					out.Hosts[i].Groups = append(out.Hosts[i].Groups, g)
				}
			}
			continue
		}
		seen[parsed.Key()] = len(out.Hosts)
		out.Hosts = append(out.Hosts, Host{Name: h.name, Target: parsed, Line: h.line, Groups: groups, SSH: ssh})
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
