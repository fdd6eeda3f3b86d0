package fleet

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// limit keeps the hosts an Ansible --limit pattern selects. Each part
// (separated by "," or ":" outside brackets) is a host or group name, a glob
// over both, or ~regex; a group selects its children's hosts too; a
// subscript picks some of a part's hosts by position in the inventory, as
// Ansible's does: fleet[0], fleet[-1], fleet[0:499] (both ends included),
// fleet[500:]. Plain parts add hosts, "&part" keeps only hosts it also
// selects, "!part" removes its hosts.
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
	var match func(part string) (func(Host) bool, error)
	match = func(part string) (func(Host) bool, error) {
		names := func(h Host) []string { return append([]string{h.Name}, keys(member[h.Name])...) }
		if m := subscriptPattern.FindStringSubmatch(part); m != nil {
			base, err := match(m[1])
			if err != nil {
				return nil, err
			}
			var of []string
			for _, h := range hosts {
				if base(h) {
					of = append(of, h.Name)
				}
			}
			picked := map[string]bool{}
			for _, n := range subscript(of, m[2], m[3], m[4]) {
				picked[n] = true
			}
			return func(h Host) bool { return picked[h.Name] }, nil
		}
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
	depth := 0
	for _, part := range strings.FieldsFunc(pattern, func(r rune) bool {
		switch r {
		case '[':
			depth++
		case ']':
			depth = max(0, depth-1)
		}
		return depth == 0 && (r == ',' || r == ':')
	}) {
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

// subscriptPattern is a part with Ansible's subscript: NAME[I] (I may be
// negative: from the end) or NAME[START:END], either end left out.
var subscriptPattern = regexp.MustCompile(`^(.+)\[(?:(-?[0-9]+)|([0-9]*):([0-9]*))\]$`)

// subscript picks of's hosts at index (from the end when negative) or from
// start to end, both included, as Ansible does; out of range picks none.
func subscript(of []string, index, start, end string) []string {
	if index != "" {
		i, err := strconv.Atoi(index)
		if i < 0 {
			i += len(of)
		}
		if err != nil || i < 0 || i >= len(of) {
			return nil
		}
		return of[i : i+1]
	}
	from, last := 0, len(of)-1
	if start != "" {
		var err error
		if from, err = strconv.Atoi(start); err != nil {
			return nil
		}
	}
	if end != "" {
		if e, err := strconv.Atoi(end); err == nil {
			last = min(last, e)
		}
	}
	if from > last {
		return nil
	}
	return of[from : last+1]
}
