package target

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Shell completion offers the ssh hosts the user already reaches: the Host
// aliases of ~/.ssh/config (and the files it includes) and the hosts of
// ~/.ssh/known_hosts. Both files are text wgperf did not write, and what is
// offered goes into a shell's command line: only a name or address that
// parses as an ssh spec (shell.Host's grammar) is offered, and reading is
// bounded, so a huge, looping or odd file costs a completion little.
const (
	sshIncludeDepth = 16      // nested Includes followed, OpenSSH's READCONF_MAX_DEPTH
	sshMaxFiles     = 64      // config files read in all, Includes together
	sshMaxFileBytes = 1 << 20 // bytes read of each file
	sshMaxLine      = 64 << 10
	sshMaxHosts     = 4096 // specs offered
)

// sshCompletions lists the ssh specs completion offers for the user whose
// home is home: ~/.ssh/config's hosts, then known_hosts', each once.
func sshCompletions(home string) []string {
	dir := filepath.Join(home, ".ssh")
	c := sshHostList{seen: map[string]bool{}}
	for _, h := range sshConfigHostsIn(filepath.Join(dir, "config"), home) {
		c.add(SSHAddress{Host: h})
	}
	for _, a := range knownHosts(filepath.Join(dir, "known_hosts")) {
		c.add(a)
	}
	return c.specs
}

// sshHostList collects specs once each, at most sshMaxHosts.
type sshHostList struct {
	specs []string
	seen  map[string]bool
}

// add appends a's spec, unless it is no valid spec or is there already.
func (c *sshHostList) add(a SSHAddress) {
	spec, ok := completionSpec(a)
	if !ok || c.seen[spec] || len(c.specs) >= sshMaxHosts {
		return
	}
	c.seen[spec] = true
	c.specs = append(c.specs, spec)
}

// completionSpec is the spec of a as SSHAddress.Spec writes it, when the
// ssh kind parses it back (sshKind's completion cannot call ParseSpec,
// which reads the kinds sshKind is one of).
func completionSpec(a SSHAddress) (string, bool) {
	rest := a.Host
	switch {
	case a.Port != 0:
		rest = net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
	case strings.Contains(a.Host, ":"):
		rest = "[" + a.Host + "]"
	}
	if s, err := parseSSHSpec(rest); err != nil || s.Host != a.Host || s.Port != a.Port {
		return "", false
	}
	return "ssh:" + rest, true
}

// sshConfigHostsIn lists the names of an ssh config's Host lines that name
// one host (patterns with "*", "?" or "!" name none), in file order,
// following Include as ssh does for a user's config: a path that is not
// absolute (nor starts with ~/) is in the config's directory, ~/.ssh; a
// glob includes every file it matches, in name order. Match blocks, and
// every other keyword, are skipped. Only names shell.Host admits are kept.
func sshConfigHostsIn(path, home string) []string {
	r := sshConfigReader{dir: filepath.Dir(path), home: home}
	r.read(path, 0)
	return r.hosts
}

// sshConfigReader reads a config and its Includes.
type sshConfigReader struct {
	dir, home string
	files     int
	hosts     []string
}

func (r *sshConfigReader) read(path string, depth int) {
	if depth > sshIncludeDepth || r.files >= sshMaxFiles {
		return
	}
	r.files++
	sc, closeFile := openBounded(path)
	if sc == nil {
		return
	}
	defer closeFile()
	for sc.Scan() {
		keyword, args := sshConfigLine(sc.Text())
		switch strings.ToLower(keyword) {
		case "host":
			for _, h := range args {
				if !strings.ContainsAny(h, "*?!") && validHost(h) {
					r.hosts = append(r.hosts, h)
				}
			}
		case "include":
			for _, pattern := range args {
				r.include(pattern, depth)
			}
		}
	}
}

// include reads the files an Include argument names.
func (r *sshConfigReader) include(pattern string, depth int) {
	switch {
	case strings.HasPrefix(pattern, "~/"):
		if r.home == "" {
			return
		}
		pattern = filepath.Join(r.home, pattern[2:])
	case strings.HasPrefix(pattern, "~"): // ~user/: another user's files
		return
	case !filepath.IsAbs(pattern):
		pattern = filepath.Join(r.dir, pattern)
	}
	matches, err := filepath.Glob(pattern) // sorted, as ssh's glob(3)
	if err != nil {
		return
	}
	for _, m := range matches {
		r.read(m, depth+1)
	}
}

// sshConfigLine splits an ssh config line into its keyword and arguments
// as ssh does: "Keyword args", "Keyword=args" or "Keyword = args",
// arguments separated by spaces, a double-quoted one keeping its spaces;
// "#" starts a comment at the start of a line or of an argument.
func sshConfigLine(line string) (string, []string) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", nil
	}
	end := strings.IndexAny(line, " \t=")
	if end < 0 {
		return line, nil
	}
	keyword, rest := line[:end], strings.TrimLeft(line[end:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	var args []string
	for rest != "" {
		var arg string
		if rest[0] == '"' {
			closing := strings.IndexByte(rest[1:], '"')
			if closing < 0 {
				return keyword, args // unclosed: ssh refuses the line
			}
			arg, rest = rest[1:closing+1], rest[closing+2:]
		} else if rest[0] == '#' {
			break
		} else {
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			arg, rest = rest[:end], rest[end:]
		}
		args = append(args, arg)
		rest = strings.TrimLeft(rest, " \t")
	}
	return keyword, args
}

// knownHosts lists the hosts of a known_hosts file: each plain name or
// address of a line's comma-separated host field, "[host]:port" as the
// host with its port. Hashed entries ("|1|", HashKnownHosts) name no host
// anyone can read, patterns name no single host, and marked lines
// (@cert-authority, @revoked) name keys, not hosts: all are skipped.
func knownHosts(path string) []SSHAddress {
	sc, closeFile := openBounded(path)
	if sc == nil {
		return nil
	}
	defer closeFile()
	var out []SSHAddress
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], "@") || strings.HasPrefix(fields[0], "|") {
			continue
		}
		for _, entry := range strings.Split(fields[0], ",") {
			if a, ok := knownHost(entry); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// knownHost reads one entry of a known_hosts host field: "host" or
// "[host]:port" (ssh writes the port so when it is not 22).
func knownHost(entry string) (SSHAddress, bool) {
	if strings.ContainsAny(entry, "*?!") {
		return SSHAddress{}, false
	}
	a := SSHAddress{Host: entry}
	if strings.HasPrefix(entry, "[") {
		end := strings.Index(entry, "]:")
		if end < 0 {
			return SSHAddress{}, false
		}
		port, err := strconv.Atoi(entry[end+2:])
		if err != nil || port < 1 || port > 65535 {
			return SSHAddress{}, false
		}
		a.Host = entry[1:end]
		if port != 22 {
			a.Port = port
		}
	}
	return a, validHost(a.Host)
}

// validHost says whether a name or address may be offered: what an ssh
// spec takes (shell.Host), without an IPv6 zone.
func validHost(h string) bool {
	if strings.Contains(h, "%") {
		return false
	}
	_, ok := completionSpec(SSHAddress{Host: h})
	return ok
}

// openBounded opens a regular file (a FIFO or a device would block or never
// end) for reading lines, at most sshMaxFileBytes of it and lines of
// sshMaxLine; nil when it cannot. The func closes it.
func openBounded(path string) (*bufio.Scanner, func()) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	sc := bufio.NewScanner(io.LimitReader(f, sshMaxFileBytes))
	sc.Buffer(make([]byte, 0, 4096), sshMaxLine)
	return sc, func() { f.Close() }
}
