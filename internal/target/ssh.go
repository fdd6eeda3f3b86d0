package target

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
)

// SSHConnectTimeout bounds how long ssh may take to reach a host.
var SSHConnectTimeout = 10 * time.Second

// SSHOptions are extra "-o" options passed to every ssh call (tests use it for a
// throw-away known_hosts file); users configure ssh in ~/.ssh/config instead.
var SSHOptions []string

// SSHCommand is the local program (and leading arguments) that runs ssh. Tests
// prefix it with "ip netns exec NS" to dial a host inside a lab namespace.
var SSHCommand = []string{"ssh"}

// sshSpec is a parsed ssh:[user@]host[:port] and the host's own settings.
type sshSpec struct {
	User, Host string
	Port       int
	Opts       HostSSH
}

// HostSSH are one host's ssh settings beyond the spec, as an inventory
// gives them (Ansible's ansible_ssh_private_key_file, ansible_ssh_common_args,
// become). Every field must have passed CheckHostSSH: they reach ssh's
// command line.
type HostSSH struct {
	IdentityFile string   // ssh -i
	Options      []string // ssh -o Key=Value, ProxyJump among them
	// Become runs every command through "sudo -n -u BecomeUser --" on the
	// host (passwordless sudo: BatchMode cannot answer a prompt), for hosts
	// that refuse root logins. BecomeUser "" is root.
	Become     bool
	BecomeUser string
	// Conns is how the host's commands connect: the opening command's
	// choice, never an inventory's. Kinds not reached with ssh ignore it.
	Conns SSHConns
}

// IsZero reports whether o changes nothing (Conns aside, which only an ssh
// target uses).
func (o HostSSH) IsZero() bool {
	return o.IdentityFile == "" && len(o.Options) == 0 && !o.Become && o.BecomeUser == ""
}

// ParseWith is Parse for a host with an inventory's ssh settings; a kind
// not reached with ssh takes none.
func ParseWith(text string, o HostSSH) (Target, error) {
	s, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	return s.OpenWith(o)
}

// openSSH is the Target of a parsed ssh spec with its host's settings.
func openSSH(spec Spec, o HostSSH) (Target, error) {
	if !o.IsZero() {
		if err := CheckHostSSH(o); err != nil {
			return nil, fmt.Errorf("target %q: %v", spec, err)
		}
	}
	a := spec.addr.(SSHAddress)
	s := sshSpec{User: a.User, Host: a.Host, Port: a.Port, Opts: o}
	return &argvTarget{
		spec:    spec.text,
		remote:  true,
		wrap:    s.argv,
		session: s.session,
		// A remote shell reports a missing program with exit status 127.
		missing: func(code int, _ string) bool { return code == 127 },
	}, nil
}

// SSHAddress is who an ssh target logs in as, and where (Spec.SSH).
type SSHAddress struct {
	User string // "" leaves it to the ssh config
	Host string // a host name, IPv4 or IPv6 address (without brackets)
	Port int    // 0 leaves it to the ssh config
}

// Spec is the ssh spec that dials a: ssh:[user@]host[:port], an IPv6 host
// in brackets; it fails as ParseSpec would on a user or host ssh could
// read as an option.
func (a SSHAddress) Spec() (Spec, error) {
	text := sshKind.Prefix
	if a.User != "" {
		text += a.User + "@"
	}
	switch {
	case a.Port != 0:
		text += net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
	case strings.Contains(a.Host, ":"):
		text += "[" + a.Host + "]"
	default:
		text += a.Host
	}
	return ParseSpec(text)
}

func parseSSHSpec(rest string) (sshSpec, error) {
	var s sshSpec
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		s.User, rest = rest[:i], rest[i+1:]
		if s.User == "" {
			return s, fmt.Errorf("empty user before @")
		}
	}
	host := rest
	// [v6]:port, v4:port, or a bare host (a bare IPv6 address has several colons).
	if h, p, err := net.SplitHostPort(rest); err == nil {
		port, perr := strconv.Atoi(p)
		if perr != nil || port < 1 || port > 65535 {
			return s, fmt.Errorf("bad port %q", p)
		}
		host, s.Port = h, port
	} else if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		host = rest[1 : len(rest)-1]
	}
	if host == "" {
		return s, fmt.Errorf("want ssh:[user@]host[:port]")
	}
	// The spec may come from a file someone else wrote (an inventory, a
	// snapshot): nothing in it may reach ssh as an option or a shell as syntax.
	if s.User != "" {
		if err := shell.User(s.User); err != nil {
			return s, err
		}
	}
	if err := shell.Host(host); err != nil {
		return s, err
	}
	s.Host = host
	return s, nil
}

// argv builds the local ssh command line; extra are options for the shared
// connection. BatchMode keeps ssh from prompting; everything else (keys,
// agent, ProxyJump, host keys) comes from the user's ssh config.
func (s sshSpec) argv(extra []string, name string, args []string) []string {
	argv := append(append(append([]string{}, SSHCommand...), sshBaseOptions()...), extra...)
	// ssh hands the remote shell one string, so quote each word ourselves.
	line := commandLine(name, args)
	if s.Opts.Become {
		user := s.Opts.BecomeUser
		if user == "" {
			user = "root"
		}
		line = commandLine("sudo", []string{"-n", "-u", user, "--"}) + " " + line
	}
	// The login's PATH is the remote user's: the command runs with Path.
	line = commandLine(envProgram, []string{"PATH=" + Path}) + " " + line
	return append(append(argv, s.destination()...), line)
}

// sshBaseOptions are the options every ssh call gets.
func sshBaseOptions() []string {
	opts := []string{"-o", "BatchMode=yes", "-o", fmt.Sprintf("ConnectTimeout=%d", int(SSHConnectTimeout.Seconds()))}
	for _, o := range SSHOptions {
		opts = append(opts, "-o", o)
	}
	return opts
}

// destination is port, user, "--" and the host. "--" ends ssh's options
// before the destination, so even a host that got past parseSSHSpec could
// not be read as one.
func (s sshSpec) destination() []string {
	var argv []string
	if s.Opts.IdentityFile != "" {
		argv = append(argv, "-i", s.Opts.IdentityFile)
	}
	for _, o := range s.Opts.Options {
		argv = append(argv, "-o", o)
	}
	if s.Port != 0 {
		argv = append(argv, "-p", strconv.Itoa(s.Port))
	}
	if s.User != "" {
		argv = append(argv, "-l", s.User)
	}
	return append(argv, "--", s.Host)
}

// session prepares one command over the host's shared connection: it waits
// for a free session slot (long-running ones take none), starts the
// connection if it is not up, and returns the options that use it. Without
// sharing (Conns.Own, or without a socket directory) the command connects by
// itself.
func (s sshSpec) session(ctx context.Context, long bool) (extra []string, release func(), stderr string, err error) {
	noop := func() {}
	if s.Opts.Conns.Own {
		return nil, noop, "", nil
	}
	pool := s.Opts.Conns.Pool
	if pool == nil {
		pool = processPool
	}
	h, err := pool.host(s)
	if err != nil {
		return nil, noop, "", nil
	}
	release = noop
	if !long {
		if err := h.acquire(ctx); err != nil {
			return nil, nil, "", err
		}
		release = h.release
	}
	if stderr, err := h.ensure(ctx); err != nil {
		release()
		return nil, nil, stderr, err
	}
	return h.options(), release, "", nil
}
