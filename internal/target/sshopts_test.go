package target

import (
	"strings"
	"testing"
)

// A host's inventory settings become ssh options before the destination,
// and become wraps the remote command in sudo -n, quoted as one string.
func TestHostSSHArgv(t *testing.T) {
	tg, err := ParseWith("ssh:deploy@gw1:2222", HostSSH{IdentityFile: "/home/ops/.ssh/fleet", Options: []string{"ProxyJump=jump@bastion.example:22", "StrictHostKeyChecking=yes"}, Become: true})
	if err != nil {
		t.Fatal(err)
	}
	s := tg.(*argvTarget)
	got := strings.Join(s.wrap(nil, "cat", []string{"--", "/proc/net/snmp"}), " ")
	want := "-i /home/ops/.ssh/fleet -o ProxyJump=jump@bastion.example:22 -o StrictHostKeyChecking=yes -p 2222 -l deploy -- gw1 /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sudo -n -u root -- cat -- /proc/net/snmp"
	if !strings.HasSuffix(got, want) {
		t.Errorf("argv\n%s\nwant it to end with\n%s", got, want)
	}
	if tg.String() != "ssh:deploy@gw1:2222" {
		t.Errorf("String() = %q", tg.String())
	}
}

// An inventory is someone else's text: nothing in it may make ssh run a
// local command or read a value as an option.
func TestHostSSHRefusesCommands(t *testing.T) {
	for _, o := range []HostSSH{
		{Options: []string{"ProxyCommand=nc %h %p"}},
		{Options: []string{"proxycommand=sh -c x"}},
		{Options: []string{"LocalCommand=touch /tmp/x"}},
		{Options: []string{"KnownHostsCommand=/bin/x"}},
		{Options: []string{"PermitLocalCommand=yes"}},
		{Options: []string{"ProxyJump=-oProxyCommand=x"}},
		{Options: []string{"ProxyJump=a@b@c"}},
		{Options: []string{"StrictHostKeyChecking=-x"}},
		{Options: []string{"ConnectTimeout=5 -oProxyCommand=x"}},
		{Options: []string{"UserKnownHostsFile=$(touch x)"}},
		{IdentityFile: "-oProxyCommand=x"},
		{Become: true, BecomeUser: "-u"},
	} {
		if _, err := ParseWith("ssh:gw1", o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := ParseWith("local", HostSSH{Become: true}); err == nil {
		t.Error("ssh settings accepted for a local target")
	}
}

// An inventory may not make root's ssh write a file or trust host keys less
// (issue 41, hole 1): UserKnownHostsFile pointed at root's authorized_keys
// with HostKeyAlias=cert-authority and StrictHostKeyChecking=accept-new
// appended an attacker's key there. Each is refused in one line naming it.
func TestHostSSHRefusesFileWritesAndWeakChecks(t *testing.T) {
	for _, opt := range []string{
		"UserKnownHostsFile=/root/.ssh/authorized_keys",
		"userknownhostsfile=/dev/null",
		"UserKnownHostsFile2=/root/.ssh/authorized_keys",
		"GlobalKnownHostsFile=/etc/ssh/ssh_known_hosts",
		"HostKeyAlias=cert-authority",
		"StrictHostKeyChecking=accept-new",
		"StrictHostKeyChecking=no",
		"StrictHostKeyChecking=off",
		"StrictHostKeyChecking=ask",
		"UpdateHostKeys=yes",
		"UpdateHostKeys=ask",
		"CheckHostIP=yes",
		"ControlPath=/root/.ssh/authorized_keys",
		"ControlMaster=yes",
		"IdentityAgent=/tmp/agent",
		"RevokedHostKeys=/dev/null",
		"VerifyHostKeyDNS=yes",
		"Match=exec true",
		"Include=/tmp/x",
		"Hostname=evil",
		"LocalForward=1:a:2",
		"Port=22 -oX",
		"Ciphers=aes128-ctr -oProxyCommand=x",
		"IdentityFile=/a b",
		"ProxyJump=a=b",
	} {
		err := CheckHostSSH(HostSSH{Options: []string{opt}})
		if err == nil {
			t.Errorf("%s accepted", opt)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", opt, err)
		}
	}
	// What an inventory needs to reach a host stays.
	for _, opt := range []string{
		"StrictHostKeyChecking=yes", "ProxyJump=ops@bastion.example:2200", "HostKeyAlgorithms=+ssh-rsa",
		"PubkeyAcceptedKeyTypes=+ssh-rsa", "KexAlgorithms=+diffie-hellman-group1-sha1", "Port=2222", "User=deploy",
		"IdentityFile=~/.ssh/fleet_ed25519", "IdentitiesOnly=yes", "ConnectTimeout=5", "ServerAliveInterval=15",
		"Compression=yes", "AddressFamily=inet6", "CheckHostIP=no", "LogLevel=ERROR",
	} {
		if err := CheckHostSSH(HostSSH{Options: []string{opt}}); err != nil {
			t.Errorf("%s refused: %v", opt, err)
		}
	}
}

// inventorySays are the ssh keywords an inventory may set, as the test
// itself lists them; ssh never writes a file, runs a command or trusts a
// host key less for any of them (with the values FuzzHostSSHOption allows).
var inventorySays = map[string]bool{
	"proxyjump": true, "stricthostkeychecking": true, "checkhostip": true, "hostkeyalgorithms": true,
	"pubkeyacceptedalgorithms": true, "pubkeyacceptedkeytypes": true, "ciphers": true, "macs": true,
	"kexalgorithms": true, "preferredauthentications": true, "identitiesonly": true, "compression": true,
	"addressfamily": true, "loglevel": true, "identityfile": true, "user": true, "port": true,
	"connecttimeout": true, "connectionattempts": true, "serveraliveinterval": true, "serveralivecountmax": true,
}

// FuzzHostSSHOption is the grammar of an inventory's ssh options: whatever
// the text, an accepted Key=Value reads, as ssh's config reader splits a
// line (at blanks, quotes or the first "="), as exactly one keyword the
// inventory may set and one argument equal to the value, with nothing ssh
// would expand or read as a comment; host key checking stays strict and
// CheckHostIP records no address.
func FuzzHostSSHOption(f *testing.F) {
	for _, s := range []string{
		"StrictHostKeyChecking=yes", "StrictHostKeyChecking=accept-new", "UserKnownHostsFile=/root/.ssh/authorized_keys",
		"HostKeyAlias=cert-authority", "ProxyJump=a@b:22,c", "Ciphers=+aes128-cbc", "IdentityFile=/k", "Port=22",
		"port = 22", "Port=0x16", "User=a b", "CheckHostIP=yes", "LogLevel=\"quiet\"", "IdentityFile=/a#b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, opt string) {
		if err := CheckHostSSH(HostSSH{Options: []string{opt}}); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		words := strings.FieldsFunc(opt, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\r' || r == '\n' || r == '\f' || r == '=' || r == '"' || r == '\''
		})
		if len(words) != 2 || words[0]+"="+words[1] != opt {
			t.Fatalf("%q: ssh reads it as %q, not one keyword and one argument", opt, words)
		}
		key, value := strings.ToLower(words[0]), words[1]
		if !inventorySays[key] {
			t.Fatalf("%q: an inventory may not set %s", opt, key)
		}
		if strings.ContainsAny(value, "\\$#`") {
			t.Fatalf("%q: ssh would expand or cut the value", opt)
		}
		if key == "stricthostkeychecking" && strings.ToLower(value) != "yes" ||
			key == "checkhostip" && strings.ToLower(value) != "no" {
			t.Fatalf("%q: weakens host key checking or writes known_hosts", opt)
		}
	})
}
