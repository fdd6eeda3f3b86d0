package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

const testdata = "../../testdata/fleet"

func TestReadInventory(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []Host
	}{
		{"hosts.txt", []Host{
			{Name: "local", Target: targettest.Spec("local"), Line: 3},
			{Name: "netns:wgl-demo-a", Target: targettest.Spec("netns:wgl-demo-a"), Line: 4},
			{Name: "netns:wgl-demo-b", Target: targettest.Spec("netns:wgl-demo-b"), Line: 5},
			{Name: "ssh:root@golem", Target: targettest.Spec("ssh:root@golem"), Line: 7},
			{Name: "ssh:m42", Target: targettest.Spec("ssh:m42"), Line: 8},
			{Name: "ssh:admin@203.0.113.7:2222", Target: targettest.Spec("ssh:admin@203.0.113.7:2222"), Line: 9},
			{Name: "ssh:root@[2001:db8::7]:22", Target: targettest.Spec("ssh:root@[2001:db8::7]:22"), Line: 10},
			{Name: "golem.example.net", Target: targettest.Spec("ssh:golem.example.net"), Line: 11},
		}},
		{"inventory.ini", []Host{
			{Name: "edge.example.net", Target: targettest.Spec("ssh:edge.example.net"), Line: 2},
			// Host variables beat [berlin:vars] (user), which beats its parent [sites:vars] (port).
			{Name: "golem", Target: targettest.Spec("ssh:root@198.51.100.10:2222"), Line: 5, Groups: []string{"berlin", "extra"}},
			{Name: "m42", Target: targettest.Spec("ssh:admin@198.51.100.42:2222"), Line: 6, Groups: []string{"berlin"}},
			// host:port is a host variable: it beats the group's ansible_port.
			{Name: "router-b.example.net", Target: targettest.Spec("ssh:admin@router-b.example.net:2200"), Line: 7, Groups: []string{"berlin"}},
			{Name: "hh1", Target: targettest.Spec("ssh:deploy@203.0.113.5:22"), Line: 10, Groups: []string{"hamburg"}},
			{Name: "hh2", Target: targettest.Spec("ssh:ops@203.0.113.6:2022"), Line: 11, Groups: []string{"hamburg"}},
			{Name: "v6", Target: targettest.Spec("ssh:wg@[2001:db8::6]:22"), Line: 12, Groups: []string{"hamburg"}},
			{Name: "controller", Target: targettest.Spec("local"), Line: 13, Groups: []string{"hamburg"}},
		}},
		// The same inventory in YAML resolves to the same targets.
		{"hosts.yml", []Host{
			{Name: "edge.example.net", Target: targettest.Spec("ssh:edge.example.net"), Line: 4},
			{Name: "golem", Target: targettest.Spec("ssh:root@198.51.100.10:2222"), Line: 15, Groups: []string{"berlin", "extra"}},
			{Name: "m42", Target: targettest.Spec("ssh:admin@198.51.100.42:2222"), Line: 18, Groups: []string{"berlin"}},
			{Name: "router-b.example.net", Target: targettest.Spec("ssh:admin@router-b.example.net:2200"), Line: 20, Groups: []string{"berlin"}},
			{Name: "hh1", Target: targettest.Spec("ssh:deploy@203.0.113.5:22"), Line: 26, Groups: []string{"hamburg"}},
			{Name: "hh2", Target: targettest.Spec("ssh:ops@203.0.113.6:2022"), Line: 27, Groups: []string{"hamburg"}},
			{Name: "v6", Target: targettest.Spec("ssh:wg@[2001:db8::6]:22"), Line: 28, Groups: []string{"hamburg"}},
			{Name: "controller", Target: targettest.Spec("local"), Line: 31, Groups: []string{"hamburg"}},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if !yamlInventories && filepath.Ext(tc.file) == ".yml" {
				_, err := ReadInventory(filepath.Join(testdata, tc.file))
				if err == nil || !strings.Contains(err.Error(), "not in the router build") {
					t.Errorf("router build reading %s: %v, want a one-line refusal", tc.file, err)
				}
				return
			}
			got, err := ReadInventory(filepath.Join(testdata, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("hosts (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadInventoryErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"bad-range.ini", `bad-range.ini: line 2: host wg[01:04:0].example.net: range [01:04:0]: bad step "0"`},
		{"bad-header.ini", "bad-header.ini: line 1: section header \"[routers\" lacks its closing ]"},
		{"bad-port.ini", "bad-port.ini: line 2: host golem: bad port \"70000\""},
		{"bad-spec-vars.ini", "bad-spec-vars.ini: line 1: netns:wgl-demo-a is a target spec and takes no variables"},
		{"bad-vars.ini", "bad-vars.ini: line 2: [routers:vars] wants key=value lines, got \"ansible_user\""},
		{"bad-connection.ini", "bad-connection.ini: line 2: host box: ansible_connection=docker is not supported"},
		{"bad-empty.ini", "bad-empty.ini: the inventory names no host"},
		{"bad-target.txt", "bad-target.txt: line 1: \"telnet:golem\" is neither a target"},
		{"bad-quote.ini", "bad-quote.ini: line 2: unclosed \" quote"},
		{"bad-section.ini", "bad-section.ini: line 1: section [routers:hostvars]: want [group], [group:vars] or [group:children]"},
		{"missing.txt", "inventory: open ../../testdata/fleet/missing.txt: no such file or directory"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			hosts, err := ReadInventory(filepath.Join(testdata, tc.file))
			if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(testdata, tc.want)) && !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v (hosts %v)\nwant prefix %s", err, hosts, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			// An empty selection is no failure to the exporter's /sd: it serves [].
			if noHost := tc.file == "bad-empty.ini"; errors.Is(err, ErrNoHost) != noHost {
				t.Errorf("errors.Is(%q, ErrNoHost) = %v, want %v", err, !noHost, noHost)
			}
		})
	}
}

func TestLimitSelectingNoHostIsErrNoHost(t *testing.T) {
	_, err := Load(context.Background(), filepath.Join(testdata, "inventory.ini"), LoadOptions{Limit: "nosuchgroup"})
	if !errors.Is(err, ErrNoHost) || !strings.Contains(err.Error(), `--limit "nosuchgroup": no host of the inventory matches`) {
		t.Errorf("err = %v, want ErrNoHost naming the limit", err)
	}
}

func TestParseInventoryInline(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // targets
	}{
		{"comments and blanks only around one host", "\n  # c\n; c\nlocal   # here\n\n", []string{"local"}},
		{"hash inside a value is not a comment", "[g]\nbox ansible_host=10.0.0.1 ansible_user=a.b#c\n", nil},
		{"vars before hosts", "[g:vars]\nansible_user=root\n[g]\nbox\n", []string{"ssh:root@box"}},
		{"grandparent vars reach a grandchild", "[top:children]\nmid\n[mid:children]\nleaf\n[top:vars]\nansible_port=2200\n[leaf]\nbox\n",
			[]string{"ssh:box:2200"}},
		{"host ranges", "[web]\nweb[08:10].lan ansible_user=ops\ndb-[a:b]:2222\n", []string{"ssh:ops@web08.lan", "ssh:ops@web09.lan", "ssh:ops@web10.lan", "ssh:db-a:2222", "ssh:db-b:2222"}},
		{"sibling groups: the later name wins", "[zz]\nbox\n[aa]\nbox\n[aa:vars]\nansible_user=a\n[zz:vars]\nansible_user=z\n", []string{"ssh:z@box"}},
		{"all:vars apply to every host", "[all:vars]\nansible_user=root\n[g]\nbox\nother\n", []string{"ssh:root@box", "ssh:root@other"}},
		{"two names for one target are collected once", "a ansible_host=10.0.0.1\nb ansible_host=10.0.0.1\n", []string{"ssh:10.0.0.1"}},
		{"bare IPv6 host", "v6 ansible_host=2001:db8::1\n", []string{"ssh:[2001:db8::1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hosts, err := ParseInventory(strings.NewReader(tc.in))
			if tc.want == nil {
				// The hash stayed in the value, so the user fails its grammar.
				if err == nil || !strings.Contains(err.Error(), `"a.b#c"`) {
					t.Fatalf("err = %v, want the user a.b#c refused", err)
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

// TestInventoryRejectsOptionInjection is hole 3 for inventories: a host, an
// ansible_host or an ansible_user that ssh would read as an option is refused.
func TestInventoryRejectsOptionInjection(t *testing.T) {
	for _, in := range []string{
		"ssh:-oProxyCommand=touch${IFS}/tmp/pwned\n",
		"ssh:-oProxyCommand=x@golem\n",
		"[g]\nbox ansible_host=-oProxyCommand=touch${IFS}/tmp/pwned\n",
		"[g]\nbox ansible_user=-oProxyCommand=x\n",
		"[g:vars]\nansible_user=-oProxyCommand=x\n[g]\nbox\n",
		"-oProxyCommand=x\n",
		"[g]\nbox ansible_host=\"golem;reboot\"\n",
	} {
		checkRefused(t, ParseInventory, in)
	}
}

// TestInventoryCannotMakeSSHWriteFiles is issue 41's hole 1 as an inventory
// says it: known-hosts files, a host key alias and a weaker host key check
// in ansible_ssh_common_args are refused, whichever level sets them.
func TestInventoryCannotMakeSSHWriteFiles(t *testing.T) {
	for _, in := range []string{
		"[g]\nbox ansible_ssh_common_args='-o UserKnownHostsFile=/root/.ssh/authorized_keys -o HostKeyAlias=cert-authority'\n",
		"[g]\nbox ansible_ssh_extra_args='-o StrictHostKeyChecking=accept-new'\n",
		"[g:vars]\nansible_ssh_common_args='-oUpdateHostKeys=yes'\n[g]\nbox\n",
		"[all:vars]\nansible_ssh_common_args='-o \"GlobalKnownHostsFile /tmp/k\"'\n[g]\nbox\n",
	} {
		checkRefused(t, ParseInventory, in)
	}
}

func FuzzParseInventory(f *testing.F) {
	f.Add("[g]\nbox ansible_host=1.2.3.4 ansible_port=22\n[g:vars]\nansible_user=root\n")
	f.Add("local\nnetns:x\nssh:root@h:22\n")
	f.Fuzz(func(t *testing.T, in string) {
		if hosts, err := ParseInventory(strings.NewReader(in)); err == nil {
			checkHostsSafe(t, hosts)
		}
	})
}

// targetsOf lists the hosts' targets in order.
func targetsOf(hosts []Host) []string {
	var got []string
	for _, h := range hosts {
		got = append(got, h.Target.String())
	}
	return got
}

// checkRefused fails the test when parse accepts the inventory in.
func checkRefused(t *testing.T, parse func(io.Reader) ([]Host, error), in string) {
	t.Helper()
	if hosts, err := parse(strings.NewReader(in)); err == nil {
		t.Errorf("inventory %q accepted: %v", in, hosts)
	}
}

// checkHostsSafe holds what any accepted inventory gives: named hosts whose
// targets ssh cannot read as an option.
func checkHostsSafe(t *testing.T, hosts []Host) {
	t.Helper()
	for _, h := range hosts {
		if h.Target.String() == "" || h.Name == "" {
			t.Fatalf("empty host %+v", h)
		}
		if strings.HasPrefix(h.Target.String(), "ssh:-") || strings.Contains(h.Target.String(), "@-") {
			t.Fatalf("host %+v would reach ssh as an option", h)
		}
	}
}

// TestInventoryHostCapIsWhole is issue 41's hole 4: the host cap holds
// across the whole inventory, not per range, and is met while expanding
// (40 lines of gN-[0:99999], 556 bytes, took 4.2 GB and 83 s); one line of
// the cap's size still reads.
func TestInventoryHostCapIsWhole(t *testing.T) {
	var in strings.Builder
	for i := range 40 {
		fmt.Fprintf(&in, "g%d-[0:99999]\n", i)
	}
	for _, tc := range []string{in.String(), "a[0:9999]\nb[0:1]\n", "[x]\nh[0:9999]\n[y]\nh[0:9]\n"} {
		start := time.Now()
		_, err := ParseInventory(strings.NewReader(tc))
		if err == nil || !strings.Contains(err.Error(), "more than 10000 hosts") {
			t.Errorf("%.40q...: %v, want the inventory's host cap", tc, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%.40q...: refused after %v", tc, d)
		}
	}
	hosts, err := ParseInventory(strings.NewReader("a[0:4999]\nb[0:4999]\n"))
	if err != nil || len(hosts) != MaxHosts {
		t.Errorf("10,000 hosts in two ranges: %d, %v", len(hosts), err)
	}
}

// FuzzInventorySize is the inventory's size bound as a property: an
// inventory of any text, repeated any number of times (a range per line,
// under its own group), gives at most MaxHosts names, and the work of
// reading and resolving it stays within maxWork, so time and memory are
// linear in the file.
func FuzzInventorySize(f *testing.F) {
	f.Add("g-[0:99999]", uint8(40), "")
	f.Add("h[a:z][0:99][0:99]", uint8(3), "v=1 w=2")
	f.Add("h[0:99999:2]", uint8(2), "")
	f.Add("[all:vars]\nv=1\nw=2\n[g]\nh[00:99]", uint8(200), "")
	f.Add("[c:children]\np", uint8(255), "")
	f.Fuzz(func(t *testing.T, line string, copies uint8, vars string) {
		var in strings.Builder
		for i := range int(copies) {
			fmt.Fprintf(&in, "[g%d]\n%s %s\n", i, line, vars)
		}
		inv := newInventory(context.Background())
		err := inv.read(strings.NewReader(in.String()))
		var out *Inventory
		if err == nil {
			out, err = inv.resolve()
		}
		if inv.named > MaxHosts+1 || inv.work > maxWork+MaxHosts+len(in.String()) {
			t.Fatalf("%d names, %d steps of work for %d bytes (%v)", inv.named, inv.work, in.Len(), err)
		}
		if err == nil && len(out.Hosts) > MaxHosts {
			t.Fatalf("%d hosts", len(out.Hosts))
		}
	})
}

// FuzzExpandRange: a range never expands past the room it is given.
func FuzzExpandRange(f *testing.F) {
	for _, s := range []string{"web[01:20]", "db-[a:f]", "n[0:10:5]", "a[0:99999][0:99999]", "[0:9][a:z]"} {
		f.Add(s, 1000)
	}
	f.Fuzz(func(t *testing.T, name string, room int) {
		names, err := expandRange(context.Background(), name, room)
		if err == nil && (len(names) > max(room, 0) || len(names) == 0) {
			t.Fatalf("%q in room %d: %d names", name, room, len(names))
		}
	})
}

// Under the host cap, a host's variables and groups are bounded too: each
// of 10,000 hosts copying 50,000 [all:vars], or a chain of 5,000 nested
// groups listing every ancestor again, is refused within maxWork.
func TestInventoryWorkIsBounded(t *testing.T) {
	var vars, chain strings.Builder
	vars.WriteString("[all:vars]\n")
	for i := range 50_000 {
		fmt.Fprintf(&vars, "v%d=x\n", i)
	}
	vars.WriteString("[g]\nh[0:9999]\n")
	chain.WriteString("[g0]\nbox\n")
	for i := range 5000 {
		fmt.Fprintf(&chain, "[g%d:children]\ng%d\n", i+1, i)
	}
	for _, in := range []string{vars.String(), chain.String()} {
		if _, err := ParseInventory(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "steps to resolve") {
			t.Errorf("%.40q...: %v, want the work bound", in, err)
		}
	}
}

// The warning names each Ansible setting wgperf ignores once, however many
// hosts and groups set it; the inventory's own variables and interpreters
// pass silently (Ignored lists every one).
func TestWarningNamesIgnoredSettingsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts.ini")
	in := "[routers]\n" +
		"gw1 ansible_host=192.0.2.1 ansible_password=x site=berlin ansible_python_interpreter=/usr/bin/python3\n" +
		"gw2 ansible_host=192.0.2.2 ansible_password=y site=lisbon ansible_python_interpreter=/usr/bin/python3\n" +
		"[routers:vars]\nansible_network_os=vyos\nntp_servers=pool.ntp.org\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := Load(context.Background(), path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "inventory: Ansible settings wgperf ignores (it reaches hosts with ansible_host, _port, _user, _connection, the ssh key and args, become): ansible_network_os, ansible_password"
	if got := inv.Warning(); got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	if d := cmp.Diff([]string{"ansible_network_os", "ansible_password", "ansible_python_interpreter", "ntp_servers", "site"}, inv.Ignored); d != "" {
		t.Errorf("ignored (-want +got):\n%s", d)
	}
	// An inventory of playbook variables alone warns of nothing.
	if err := os.WriteFile(path, []byte("gw1 ansible_host=192.0.2.1 site=berlin ansible_python_interpreter=auto\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if inv, err = Load(context.Background(), path, LoadOptions{}); err != nil || inv.Warning() != "" {
		t.Errorf("playbook variables only: warning %q (%v), want none", inv.Warning(), err)
	}
}
