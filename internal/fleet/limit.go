package fleet

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// limit keeps the hosts an Ansible --limit pattern selects. Each part
// (separated by "," or ":") is a host or group name, a glob over both, or
// ~regex; a group selects its children's hosts too. Plain parts add hosts,
// "&part" keeps only hosts it also selects, "!part" removes its hosts.
func (inv *inventory) limit(hosts []Host, pattern string) ([]Host, error) {
	// A host's groups with every ancestor: --limit sites selects berlin's hosts.
	member := map[string]map[string]bool{}
	for _, h := range hosts {
		set := map[string]bool{"all": true}
		var up func(g string)
		up = func(g string) {
			if set[g] {
				return
			}
			set[g] = true
			if grp := inv.groups[g]; grp != nil {
				for _, p := range grp.parents {
					up(p)
				}
			}
		}
		for _, g := range inv.byName[h.Name].groups {
			up(g)
		}
		member[h.Name] = set
	}
	match := func(part string) (func(Host) bool, error) {
		names := func(h Host) []string { return append([]string{h.Name}, keys(member[h.Name])...) }
		switch {
		case part == "all" || part == "*":
			return func(Host) bool { return true }, nil
		case strings.HasPrefix(part, "~"):
			re, err := regexp.Compile(part[1:])
			if err != nil {
				return nil, fmt.Errorf("--limit %q: %v", part, err)
			}
			return func(h Host) bool {
				for _, n := range names(h) {
					if re.MatchString(n) {
						return true
					}
				}
				return false
			}, nil
		}
		if _, err := path.Match(part, ""); err != nil {
			return nil, fmt.Errorf("--limit %q: %v", part, err)
		}
		return func(h Host) bool {
			for _, n := range names(h) {
				if ok, _ := path.Match(part, n); ok {
					return true
				}
			}
			return false
		}, nil
	}
	var add, and, not []func(Host) bool
	for _, part := range strings.FieldsFunc(pattern, func(r rune) bool { return r == ',' || r == ':' }) {
		part = strings.TrimSpace(part)
		list := &add
		switch {
		case strings.HasPrefix(part, "!"):
			list, part = &not, part[1:]
		case strings.HasPrefix(part, "&"):
			list, part = &and, part[1:]
		}
		if part == "" {
			continue
		}
		f, err := match(part)
		if err != nil {
			return nil, err
		}
		*list = append(*list, f)
	}
	if len(add) == 0 {
		add = append(add, func(Host) bool { return true })
	}
	var out []Host
	for _, h := range hosts {
		in := false
		for _, f := range add {
			in = in || f(h)
		}
		for _, f := range and {
			in = in && f(h)
		}
		for _, f := range not {
			in = in && !f(h)
		}
		if in {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, noHostError(fmt.Sprintf("--limit %q: no host of the inventory matches", pattern))
	}
	return out, nil
}
