//go:build !router

package fleet

import (
	"fmt"
	"io"

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
// variables, or nothing), vars and children (a map of groups of the same
// shape). Variables resolve as in the INI form (host over child group over
// parent group over all), host names and values pass the same validation, and
// errors name the line.
func ParseYAMLInventory(r io.Reader) ([]Host, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("the inventory names no host")
		}
		return nil, fmt.Errorf("YAML: %v", err)
	}
	inv := &inventory{groups: map[string]*group{}, byName: map[string]*hostEntry{}}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a map of groups (all:, or group names) at the top", root.Line)
	}
	if err := forEach(root, func(name string, _ *yaml.Node, g *yaml.Node) error {
		return inv.yamlGroup(name, g)
	}); err != nil {
		return nil, err
	}
	return inv.resolve()
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
				vars, err := yamlVars(host, hv)
				if err != nil {
					return err
				}
				if err := inv.addHost(hk.Line, section, host, vars); err != nil {
					return fmt.Errorf("line %d: %v", hk.Line, err)
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
				grp := inv.group(name)
				if !contains(grp.children, child) {
					grp.children = append(grp.children, child)
				}
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
		switch key {
		case "ansible_host", "ansible_port", "ansible_user", "ansible_connection":
			return fmt.Errorf("line %d: %s: %s must be a plain value", v.Line, owner, key)
		}
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
