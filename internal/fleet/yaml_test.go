//go:build !router

package fleet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseYAMLInventory(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // targets; nil: an error containing err
		err      string
	}{
		{name: "top-level group without all", in: "routers:\n  hosts:\n    gw1:\n    gw2: {ansible_user: root}\n  vars: {ansible_port: 2200}\n",
			want: []string{"ssh:gw1:2200", "ssh:root@gw2:2200"}},
		{name: "child vars beat parent vars", in: "all:\n  vars: {ansible_user: a}\n  children:\n    g:\n      vars: {ansible_user: b}\n      hosts: {box: }\n",
			want: []string{"ssh:b@box"}},
		{name: "target specs as host names", in: "all:\n  hosts:\n    local:\n    netns:site-a:\n", want: []string{"local", "netns:site-a"}},
		{name: "JSON form", in: `{"all": {"children": {"g": {"hosts": {"gw1": {"ansible_host": "192.0.2.1", "ansible_port": 2222}}}}}}`,
			want: []string{"ssh:192.0.2.1:2222"}},
		{name: "empty groups are fine", in: "all:\n  children:\n    empty:\n    g:\n      hosts:\n        box:\n", want: []string{"ssh:box"}},
		{name: "hosts as a list", in: "all:\n  hosts:\n    - gw1\n", err: "line 3: all.hosts: want a map of host names"},
		{name: "unknown key", in: "all:\n  host:\n    gw1:\n", err: `line 2: group all: unknown key "host"`},
		{name: "repeated host", in: "all:\n  hosts:\n    gw1:\n    gw1:\n", err: `line 4: "gw1" repeats the key of line 3`},
		{name: "host range too large", in: "all:\n  hosts:\n    gw[1:999999]:\n", err: "line 3: host gw[1:999999]: range [1:999999]: the inventory names more than 10000 hosts (ranges expanded)"},
		{name: "bad port", in: "all:\n  hosts:\n    gw1: {ansible_port: 70000}\n", err: `line 3: host gw1: bad port "70000"`},
		{name: "structured ansible_host", in: "all:\n  hosts:\n    gw1:\n      ansible_host: [a, b]\n", err: "line 4: gw1: ansible_host must be a plain value"},
		{name: "unsupported connection", in: "all:\n  hosts:\n    box: {ansible_connection: docker}\n", err: "ansible_connection=docker is not supported"},
		{name: "not YAML", in: "all:\n  hosts: [\n", err: "YAML:"},
		{name: "no hosts", in: "all:\n  vars: {ansible_user: root}\n", err: "the inventory names no host"},
		{name: "empty file", in: "", err: "the inventory names no host"},
		{name: "scalar at the top", in: "gw1\n", err: "line 1: want a map of groups"},
		{name: "self child", in: "g:\n  children:\n    g:\n", err: "group g is its own child"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hosts, err := ParseYAMLInventory(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v (hosts %v), want %q", err, hosts, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, targetsOf(hosts)); d != "" {
				t.Errorf("targets (-want +got):\n%s", d)
			}
		})
	}
}

// The YAML form refuses what the INI form refuses: nothing an inventory says
// may reach ssh as an option or a shell as a command.
func TestYAMLInventoryRejectsOptionInjection(t *testing.T) {
	for _, in := range []string{
		"all:\n  hosts:\n    ssh:-oProxyCommand=touch${IFS}/tmp/pwned:\n",
		"all:\n  hosts:\n    -oProxyCommand=x:\n",
		"all:\n  hosts:\n    box: {ansible_host: -oProxyCommand=touch${IFS}/tmp/pwned}\n",
		"all:\n  hosts:\n    box: {ansible_user: -oProxyCommand=x}\n",
		"all:\n  vars: {ansible_user: -oProxyCommand=x}\n  hosts: {box: }\n",
		"all:\n  hosts:\n    box: {ansible_host: \"golem;reboot\"}\n",
		"all:\n  hosts:\n    netns:x: {ansible_user: root}\n",
	} {
		checkRefused(t, ParseYAMLInventory, in)
	}
}

func FuzzParseYAMLInventory(f *testing.F) {
	f.Add("all:\n  hosts:\n    gw1: {ansible_host: 1.2.3.4, ansible_port: 22}\n  vars: {ansible_user: root}\n")
	f.Add("g:\n  children:\n    h:\n      hosts: {local: }\n")
	f.Fuzz(func(t *testing.T, in string) {
		if hosts, err := ParseYAMLInventory(strings.NewReader(in)); err == nil {
			checkHostsSafe(t, hosts)
		}
	})
}
