// Package fleet diagnoses many hosts at once: it reads an inventory (a plain
// list of target specs, an Ansible INI file or an Ansible YAML file) and collects snapshots
// from the hosts in parallel, with a bound on concurrency and a per-host
// timeout. A host that does not answer is reported, never fatal.
package fleet

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
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
	Groups []string `json:"groups,omitempty"` // INI sections it is listed in
}

// ReadInventory parses the inventory file at path; errors name the file and
// line. A .yml, .yaml or .json file is an Ansible YAML inventory (JSON is
// YAML; ParseYAMLInventory), anything else a list or INI inventory
// (ParseInventory), as Ansible's inventory plugins pick by extension.
func ReadInventory(path string) ([]Host, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inventory: %v", err)
	}
	defer f.Close()
	parse := ParseInventory
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yml" || ext == ".yaml" || ext == ".json" {
		parse = ParseYAMLInventory
	}
	hosts, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return hosts, nil
}

// ParseInventory reads hosts, one per line, in either of two forms that may
// be mixed:
//
//   - a target spec: "local", "netns:NAME", "ssh:[user@]host[:port]";
//   - an Ansible INI host line: "name [key=value ...]", read as
//     ssh:[ansible_user@](ansible_host|name)[:ansible_port] ("name" may carry
//     ":port"); ansible_connection=local makes it "local".
//
// "[group]" starts a section of host lines, "[group:vars]" holds key=value
// lines for the hosts of the group (and of its children), "[group:children]"
// names child groups; "[all:vars]" applies to every host. Host variables win
// over group variables, a child group's over its parent's. "#" and ";" start
// comments. A host listed twice (by name or by resulting target) is kept once,
// at its first line. Between sibling groups that set the same variable, the
// group whose name sorts last wins, as in Ansible. Errors name the line.
func ParseInventory(r io.Reader) ([]Host, error) {
	inv := &inventory{groups: map[string]*group{}}
	if err := inv.read(r); err != nil {
		return nil, err
	}
	return inv.resolve()
}

type group struct {
	vars     map[string]string
	children []string
}

type hostEntry struct {
	name   string
	line   int
	vars   map[string]string // host variables
	groups []string
	spec   bool // the name is a target spec, not an Ansible host
}

type inventory struct {
	groups map[string]*group
	hosts  []*hostEntry
	byName map[string]*hostEntry
}

func (inv *inventory) group(name string) *group {
	g := inv.groups[name]
	if g == nil {
		g = &group{vars: map[string]string{}}
		inv.groups[name] = g
	}
	return g
}

func (inv *inventory) read(r io.Reader) error {
	inv.byName = map[string]*hostEntry{}
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
			g := inv.group(section)
			g.children = append(g.children, line)
			inv.group(line)
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
	return inv.addHost(n, section, name, vars)
}

// addHost records a host of an INI line or a YAML hosts: entry.
func (inv *inventory) addHost(n int, section, name string, vars map[string]string) error {
	spec := isSpec(name)
	if spec && len(vars) > 0 {
		return fmt.Errorf("%s is a target spec and takes no variables (write an Ansible host name to use them)", name)
	}
	if !spec {
		if strings.Contains(name, "[") {
			return fmt.Errorf("host %s: host ranges are not supported; list the hosts one per line", name)
		}
		// Ansible reads "host:port" as host with a host variable ansible_port.
		if h, p, err := net.SplitHostPort(name); err == nil {
			if _, err := strconv.Atoi(p); err != nil {
				return fmt.Errorf("%q is neither a target (local, netns:NAME, ssh:[user@]host[:port]) nor an Ansible host[:port]", name)
			}
			name = h
			if _, set := vars["ansible_port"]; !set {
				vars["ansible_port"] = p
			}
		}
	}
	h := inv.byName[name]
	if h == nil {
		h = &hostEntry{name: name, line: n, vars: map[string]string{}, spec: spec}
		inv.byName[name] = h
		inv.hosts = append(inv.hosts, h)
	}
	for k, v := range vars {
		h.vars[k] = v
	}
	if !contains(h.groups, section) {
		h.groups = append(h.groups, section)
	}
	return nil
}

func (inv *inventory) resolve() ([]Host, error) {
	var out []Host
	seen := map[string]int{} // target spec -> index in out
	for _, h := range inv.hosts {
		var spec string
		if h.spec {
			spec = h.name
		} else {
			vars := map[string]string{}
			inv.groupVars("all", vars, map[string]bool{})
			for _, g := range sorted(h.groups) {
				inv.groupVars(g, vars, map[string]bool{})
			}
			for k, v := range h.vars {
				vars[k] = v
			}
			var err error
			if spec, err = sshSpec(h.name, vars); err != nil {
				return nil, fmt.Errorf("line %d: host %s: %v", h.line, h.name, err)
			}
		}
		if _, err := target.Parse(spec); err != nil {
			return nil, fmt.Errorf("line %d: %v", h.line, err)
		}
		var groups []string
		for _, g := range h.groups {
			if g != "ungrouped" {
				groups = append(groups, g)
			}
		}
		if i, dup := seen[spec]; dup {
			for _, g := range groups {
				if !contains(out[i].Groups, g) {
					out[i].Groups = append(out[i].Groups, g)
				}
			}
			continue
		}
		seen[spec] = len(out)
		out = append(out, Host{Name: h.name, Target: spec, Line: h.line, Groups: groups})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the inventory names no host")
	}
	return out, nil
}

// groupVars merges the variables of g's parents, then g's own, into vars, so
// a child group's values win over its parent's.
func (inv *inventory) groupVars(g string, vars map[string]string, visiting map[string]bool) {
	if visiting[g] {
		return // a cycle of :children sections
	}
	visiting[g] = true
	for _, parent := range sorted(keys(inv.groups)) {
		if contains(inv.groups[parent].children, g) {
			inv.groupVars(parent, vars, visiting)
		}
	}
	if grp := inv.groups[g]; grp != nil {
		for k, v := range grp.vars {
			vars[k] = v
		}
	}
	delete(visiting, g)
}

// sshSpec turns an Ansible host and its variables into a target spec.
func sshSpec(name string, vars map[string]string) (string, error) {
	conn := vars["ansible_connection"]
	switch conn {
	case "local":
		return "local", nil
	case "", "ssh", "smart", "paramiko":
	default:
		return "", fmt.Errorf("ansible_connection=%s is not supported (wgperf reaches hosts with ssh or runs locally)", conn)
	}
	addr, port := name, ""
	if v := vars["ansible_host"]; v != "" {
		addr = v
	}
	if v := vars["ansible_port"]; v != "" {
		port = v
	}
	if port != "" {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", fmt.Errorf("bad port %q", port)
		}
	}
	// An inventory is someone else's text: "-oProxyCommand=..." as a host or
	// user must never reach ssh.
	if err := shell.Host(addr); err != nil {
		return "", fmt.Errorf("ansible_host: %v", err)
	}
	spec := "ssh:"
	if u := vars["ansible_user"]; u != "" {
		if err := shell.User(u); err != nil {
			return "", fmt.Errorf("ansible_user: %v", err)
		}
		spec += u + "@"
	}
	if port != "" {
		return spec + net.JoinHostPort(addr, port), nil
	}
	if strings.Contains(addr, ":") { // a bare IPv6 address
		return spec + "[" + addr + "]", nil
	}
	return spec + addr, nil
}

// isSpec reports whether a host word is already a wgperf target spec.
func isSpec(word string) bool {
	return word == "local" || strings.HasPrefix(word, "netns:") || strings.HasPrefix(word, "ssh:")
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
	}
	return key
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

func keys(m map[string]*group) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
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
