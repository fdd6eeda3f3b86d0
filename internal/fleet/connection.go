package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// This file holds how a host is reached: its Ansible connection variables
// (ansible_host, _port, _user, the ssh key, ssh arguments, become) turned
// into a target spec and validated ssh settings.

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
