package fleet

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// This file holds the reader of plain and Ansible INI inventories: sections,
// host lines with their variables, and the quoting and comments of a line.

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
