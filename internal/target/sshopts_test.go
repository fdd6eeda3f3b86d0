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
	want := "-i /home/ops/.ssh/fleet -o ProxyJump=jump@bastion.example:22 -o StrictHostKeyChecking=yes -p 2222 -l deploy -- gw1 sudo -n -u root -- cat -- /proc/net/snmp"
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
