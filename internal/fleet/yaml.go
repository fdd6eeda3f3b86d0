//go:build !router

package fleet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlInventories says this build reads YAML (and JSON) inventories.
const yamlInventories = true

// ParseYAMLInventory reads an Ansible YAML inventory (hosts.yml):
//
//	all:
//	  vars: {ansible_user: root}
//	  children:
//	    berlin:
//	      hosts:
//	        golem: {ansible_host: 198.51.100.10, ansible_port: 2222}
//	        m42:
//	      vars: {ansible_user: admin}
//
// Every top-level key is a group; a group has hosts (a map of host name to its
// variables, or nothing; names may hold ranges, web[01:20]), vars and
// children (a map of groups of the same shape). The JSON "ansible-inventory
// --list" prints (a "_meta" with every host's resolved variables, groups
// with lists of hosts and children) is read too. Variables resolve as in
// the INI form, host names and values pass the same validation, and errors
// name the line.
func ParseYAMLInventory(r io.Reader) ([]Host, error) {
	inv := newInventory(context.Background())
	if err := inv.readYAML(r); err != nil {
		return nil, err
	}
	out, err := inv.resolve()
	if err != nil {
		return nil, err
	}
	return out.Hosts, nil
}

func (inv *inventory) readYAML(r io.Reader) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if err == io.EOF {
			return nil // an empty file names no host (resolve says so when none does)
		}
		return fmt.Errorf("YAML: %v", err)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a map of groups (all:, or group names) at the top", root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "_meta" {
			return inv.readListed(root)
		}
	}
	return forEach(root, func(name string, _ *yaml.Node, g *yaml.Node) error {
		return inv.yamlGroup(name, g)
	})
}

// readListed reads "ansible-inventory --list" output: groups list their
// hosts and children, and _meta.hostvars holds each host's variables as
// Ansible resolved them (group_vars/ and host_vars/ included).
func (inv *inventory) readListed(root *yaml.Node) error {
	inv.listed = true
	hostvars := map[string]map[string]string{}
	var listedHosts []string // the hosts this listing names, in its order
	err := forEach(root, func(name string, _ *yaml.Node, g *yaml.Node) error {
		if name == "_meta" {
			return forEach(g, func(key string, _ *yaml.Node, v *yaml.Node) error {
				if key != "hostvars" || isNull(v) {
					return nil
				}
				return forEach(v, func(host string, _ *yaml.Node, hv *yaml.Node) error {
					vars, err := yamlVars(host, hv)
					hostvars[host] = vars
					return err
				})
			})
		}
		inv.group(name)
		return forEach(g, func(key string, _ *yaml.Node, v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return nil // vars of an --export listing: _meta has them resolved
			}
			for _, item := range v.Content {
				switch key {
				case "hosts":
					if err := inv.addHost(item.Line, name, item.Value, map[string]string{}); err != nil {
						return fmt.Errorf("line %d: %v", item.Line, err)
					}
					listedHosts = append(listedHosts, item.Value)
				case "children":
					inv.addChild(name, item.Value)
				}
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	// Only this listing's hosts come resolved: another source's keep
	// their own variables.
	for _, name := range listedHosts {
		h := inv.byName[name]
		if h == nil || h.merged != nil {
			continue
		}
		h.merged = hostvars[name]
		if h.merged == nil {
			h.merged = map[string]string{}
		}
	}
	return nil
}

// parseVarsFile reads a group_vars/ or host_vars/ file: a YAML (or JSON) map
// of variables.
func parseVarsFile(path string, data []byte) (map[string]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: YAML: %v", path, err)
	}
	if len(doc.Content) == 0 {
		return map[string]string{}, nil
	}
	vars, err := yamlVars(path, doc.Content[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return vars, nil
}

// yamlGroup reads one group's hosts, vars and children.
func (inv *inventory) yamlGroup(name string, g *yaml.Node) error {
	inv.group(name)
	if isNull(g) {
		return nil
	}
	if g.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: group %s: want a map of hosts, vars and children", g.Line, name)
	}
	section := name
	if name == "all" {
		section = "ungrouped" // hosts right under all: belong to no named group
	}
	return forEach(g, func(key string, k, v *yaml.Node) error {
		switch key {
		case "hosts":
			if isNull(v) {
				return nil
			}
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: %s.hosts: want a map of host names (a list is not Ansible's format)", v.Line, name)
			}
			return forEach(v, func(host string, hk, hv *yaml.Node) error {
				names, err := expandRange(inv.ctx, host, MaxHosts-inv.named)
				if err != nil {
					return fmt.Errorf("line %d: host %s: %v", hk.Line, host, err)
				}
				for _, name := range names {
					vars, err := yamlVars(name, hv)
					if err != nil {
						return err
					}
					if err := inv.addHost(hk.Line, section, name, vars); err != nil {
						return fmt.Errorf("line %d: %v", hk.Line, err)
					}
				}
				return nil
			})
		case "vars":
			vars, err := yamlVars(name+".vars", v)
			if err != nil {
				return err
			}
			for k, val := range vars {
				inv.group(name).vars[k] = val
			}
			return nil
		case "children":
			if isNull(v) {
				return nil
			}
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: %s.children: want a map of groups", v.Line, name)
			}
			return forEach(v, func(child string, _, cv *yaml.Node) error {
				if child == name {
					return fmt.Errorf("line %d: group %s is its own child", cv.Line, name)
				}
				inv.addChild(name, child)
				return inv.yamlGroup(child, cv)
			})
		}
		return fmt.Errorf("line %d: group %s: unknown key %q (want hosts, vars or children)", k.Line, name, key)
	})
}

// yamlVars reads a map of variables. Values wgperf uses must be scalars;
// others (lists, maps for other tools) are ignored.
func yamlVars(owner string, n *yaml.Node) (map[string]string, error) {
	vars := map[string]string{}
	if isNull(n) {
		return vars, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s: want a map of variables", n.Line, owner)
	}
	err := forEach(n, func(key string, _, v *yaml.Node) error {
		key = canonical(key)
		if v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			vars[key] = v.Value
			return nil
		}
		if strings.HasPrefix(key, "ansible_") && v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s: %s must be a plain value", v.Line, owner, key)
		}
		// A list or map for other tools: wgperf names it among the ignored.
		vars[key] = ""
		return nil
	})
	return vars, err
}

// forEach calls f for the pairs of a map node in file order. Keys must be
// plain strings and unique: YAML would let a repeated host silently replace
// the first.
func forEach(m *yaml.Node, f func(key string, k, v *yaml.Node) error) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return fmt.Errorf("line %d: want a name as the key", k.Line)
		}
		if first, dup := seen[k.Value]; dup {
			return fmt.Errorf("line %d: %q repeats the key of line %d", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
		if err := f(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "")
}

// readVarDirs reads group_vars/ and host_vars/ in dir (beside an inventory
// file, or inside an inventory directory), as Ansible's host_group_vars
// plugin does: for a group or host NAME, the file NAME, NAME.yml, NAME.yaml
// or NAME.json, or every such file in a folder NAME/ (in name order, later
// files winning). They add to what an earlier source's folders gave, and
// win over it.
func (inv *inventory) readVarDirs(dir string) error {
	load := func(kind, name string) (map[string]string, error) {
		if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			return nil, nil // not a name Ansible would look up either
		}
		var files []string
		base := filepath.Join(dir, kind, name)
		for _, ext := range []string{"", ".yml", ".yaml", ".json"} {
			if fi, err := os.Stat(base + ext); err == nil && fi.Mode().IsRegular() {
				files = append(files, base+ext)
			}
		}
		if fi, err := os.Stat(base); err == nil && fi.IsDir() {
			// WalkDir follows no link; its entries count in the walk's bound.
			if err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if cerr := inv.countEntry(base); cerr != nil {
					return cerr
				}
				if d != nil && d.IsDir() && strings.Count(strings.TrimPrefix(p, base), "/") >= maxDirDepth {
					return fmt.Errorf("inventory: %s: more than %d directories deep", p, maxDirDepth)
				}
				ext := filepath.Ext(p)
				if err == nil && d.Type().IsRegular() && (ext == "" || ext == ".yml" || ext == ".yaml" || ext == ".json") {
					files = append(files, p)
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
		if len(files) == 0 {
			return nil, nil
		}
		vars := map[string]string{}
		for _, f := range files {
			b, err := inv.readSmall(f, 1<<20)
			if err != nil {
				return nil, err
			}
			v, err := parseVarsFile(f, b)
			if err != nil {
				return nil, err
			}
			for k, val := range v {
				vars[k] = val
			}
		}
		return vars, nil
	}
	inv.group("all")
	for _, name := range keys(inv.groups) {
		v, err := load("group_vars", name)
		if err != nil {
			return err
		}
		inv.groups[name].fileVars = mergeVars(inv.groups[name].fileVars, v)
	}
	for _, h := range inv.hosts {
		if h.spec {
			continue
		}
		v, err := load("host_vars", h.name)
		if err != nil {
			return err
		}
		h.fileVars = mergeVars(h.fileVars, v)
		if err := inv.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// mergeVars adds later's variables to earlier's, later winning.
func mergeVars(earlier, later map[string]string) map[string]string {
	if earlier == nil {
		return later
	}
	for k, v := range later {
		earlier[k] = v
	}
	return earlier
}

// readSmall reads a variables file of at most limit bytes, counted against
// maxReadBytes.
func (inv *inventory) readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(inv.bounded(f, path), limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, limit>>20)
	}
	return b, nil
}
