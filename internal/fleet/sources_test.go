package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/target"
)

// writeTree writes files (path relative to dir -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// An inventory directory is read as Ansible reads one (issue 42): every
// inventory file in it and its sub-directories, in name order, skipping
// hidden names, ansible.cfg and the other ignored extensions (each of which
// would be an error here if read), with the group_vars/ inside it; later
// files' variables win, groups add up.
func TestInventoryDirectory(t *testing.T) {
	if !yamlInventories {
		t.Skip("the router build reads no YAML")
	}
	dir := t.TempDir()
	garbage := "[not an inventory\n"
	writeTree(t, dir, map[string]string{
		"01-base.ini":           "[routers]\ngw1 ansible_host=10.0.0.1\n[routers:vars]\nansible_user=admin\n",
		"02-over.yml":           "routers:\n  hosts:\n    gw1: {ansible_port: 2222}\n  vars: {ansible_user: ops}\nberlin:\n  hosts:\n    gw2:\n",
		"hosts.ini":             "[berlin]\ngw1\n", // .ini is read, as ansible-core 2.19 reads it
		"sub/03":                "[lisbon]\ngw3 ansible_host=10.0.3.1\n",
		"empty.yml":             "",
		"group_vars/berlin.yml": "ansible_user: root\n",
		// Ansible skips all of these in an inventory directory.
		"ansible.cfg": "[defaults]\ninventory = .\n", ".hidden": garbage, "notes.md": garbage, "old.bak": garbage,
		"hosts.ini~": garbage, "site.retry": garbage, "x.orig": garbage, "README.txt": garbage, "y.swp": garbage,
		"vars_plugins/x": garbage, "host_vars/gw3": "ansible_port: 2203\n", "sub/group_vars/lisbon.yml": "ansible_user: never\n",
	})
	inv, err := Load(context.Background(), dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type h struct{ Name, Target string }
	var got []h
	for _, x := range inv.Hosts {
		got = append(got, h{x.Name, x.Target.String()})
	}
	want := []h{
		// routers' ansible_user of 02-over.yml wins over 01-base.ini's;
		// group_vars/berlin (deeper than all, equal to routers, later by name) wins over both.
		{"gw1", "ssh:root@10.0.0.1:2222"},
		{"gw2", "ssh:root@gw2"},
		// sub/group_vars is not the source's: Ansible reads group_vars/ of the source only.
		{"gw3", "ssh:10.0.3.1:2203"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	if g := inv.Hosts[0].Groups; !cmp.Equal(g, []string{"routers", "berlin"}) {
		t.Errorf("gw1's groups %v, want routers and berlin from two files", g)
	}
	limited, err := Load(context.Background(), dir, LoadOptions{Limit: "berlin:!gw2"})
	if err != nil || len(limited.Hosts) != 1 || limited.Hosts[0].Name != "gw1" {
		t.Errorf("--limit berlin:!gw2 over a directory: %v, %v", limited, err)
	}
}

// Repeated --inventory merges the sources in order as Ansible merges
// several -i: a later source's host and group variables win, groups and
// hosts add up, and each source's group_vars/ and host_vars/ apply (the
// later one's winning).
func TestInventoryRepeated(t *testing.T) {
	if !yamlInventories {
		t.Skip("the router build reads no YAML")
	}
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, map[string]string{
		"hosts.ini":          "[routers]\ngw1 ansible_host=10.0.0.1 ansible_port=22\ngw2\n[routers:vars]\nansible_user=admin\n",
		"group_vars/all.yml": "ansible_ssh_private_key_file: /keys/a\n",
		"host_vars/gw2.yml":  "ansible_host: 10.0.0.2\n",
	})
	writeTree(t, b, map[string]string{
		"hosts.yml":          "all:\n  children:\n    routers:\n      hosts:\n        gw1: {ansible_port: 2222}\n      vars: {ansible_user: ops}\n    lisbon:\n      hosts:\n        gw1:\n        gw3:\n",
		"group_vars/all.yml": "ansible_ssh_private_key_file: /keys/b\n",
	})
	inv, err := LoadAll(context.Background(), []string{filepath.Join(a, "hosts.ini"), filepath.Join(b, "hosts.yml")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]resolved{
		"gw1": {"ssh:ops@10.0.0.1:2222", target.HostSSH{IdentityFile: "/keys/b"}, []string{"lisbon", "routers"}},
		"gw2": {"ssh:ops@10.0.0.2", target.HostSSH{IdentityFile: "/keys/b"}, []string{"routers"}},
		"gw3": {"ssh:gw3", target.HostSSH{IdentityFile: "/keys/b"}, []string{"lisbon"}},
	}
	if diff := cmp.Diff(want, byName(inv.Hosts)); diff != "" {
		t.Errorf("merged sources (-want +got):\n%s", diff)
	}
	// The other order: the INI file's variables win.
	inv, err = LoadAll(context.Background(), []string{filepath.Join(b, "hosts.yml"), filepath.Join(a, "hosts.ini")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := byName(inv.Hosts)["gw1"]; got.Target != "ssh:admin@10.0.0.1:22" || got.SSH.IdentityFile != "/keys/a" {
		t.Errorf("gw1 with the INI file last: %+v", got)
	}
	// An error names the file it is in.
	writeTree(t, b, map[string]string{"bad.ini": "[x]\nh ansible_port=http\n"})
	_, err = LoadAll(context.Background(), []string{filepath.Join(a, "hosts.ini"), filepath.Join(b, "bad.ini")}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(b, "bad.ini")+": line 2: host h") {
		t.Errorf("bad port in the second source: %v, want its file and line", err)
	}
}

// The whole-inventory bounds (issue 41, hole 4) hold across sources: two
// files or a directory of ranges under the cap each are refused together,
// a directory's entries count as work, an inventory script is refused
// (never run) and a directory linking to itself is no loop.
func TestInventorySourcesShareBounds(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"d/a": "a[0:5999]\n", "d/b": "b[0:5999]\n", "one": "c[0:5999]\n", "two": "e[0:5999]\n"})
	for _, paths := range [][]string{{filepath.Join(dir, "one"), filepath.Join(dir, "two")}, {filepath.Join(dir, "d")}} {
		if _, err := LoadAll(context.Background(), paths, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "more than 10000 hosts") {
			t.Errorf("%v: %v, want the inventory's host cap", paths, err)
		}
	}
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		writeTree(t, many, map[string]string{fmt.Sprintf("h%d", i): fmt.Sprintf("h%d\n", i)})
	}
	inv := newInventory(context.Background())
	inv.work = maxWork - 2
	if err := inv.readDir(many, 0); err == nil || !strings.Contains(err.Error(), "steps to resolve") {
		t.Errorf("a directory past the work bound: %v", err)
	}

	script := filepath.Join(dir, "s", "ec2.py")
	writeTree(t, dir, map[string]string{"s/ec2.py": "#!/usr/bin/env python3\nprint('{}')\n"})
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "s"), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "an inventory script: wgperf runs none") {
		t.Errorf("an inventory script: %v", err)
	}
	writeTree(t, dir, map[string]string{"loop/inner/hosts": "gw\n"})
	if err := os.Symlink("..", filepath.Join(dir, "loop", "inner", "up")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), filepath.Join(dir, "loop"), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "reached a second time") {
		t.Errorf("a directory linking to its parent: %v", err)
	}
}

// The /probe targets of an inventory, as Prometheus' file_sd reads them:
// one group per host, its spec as /probe?target= takes it, its name and
// groups as plain labels; hosts with ssh settings of their own are named,
// since /probe reaches them without those.
func TestPrometheusTargets(t *testing.T) {
	hosts, err := ParseInventory(strings.NewReader("netns:site-a\n[routers]\ngw1 ansible_host=10.0.0.1 ansible_user=root\n[berlin]\ngw1\ngw2 ansible_ssh_private_key_file=/k\n"))
	if err != nil {
		t.Fatal(err)
	}
	groups, unreached := PrometheusTargets(append(hosts, hosts[0]))
	want := []TargetGroup{
		{Targets: []string{"netns:site-a"}, Labels: map[string]string{"wgperf_host": "netns:site-a"}},
		{Targets: []string{"ssh:root@10.0.0.1"}, Labels: map[string]string{"wgperf_host": "gw1", "wgperf_group": "routers", "wgperf_groups": ",routers,berlin,"}},
		{Targets: []string{"ssh:gw2"}, Labels: map[string]string{"wgperf_host": "gw2", "wgperf_group": "berlin", "wgperf_groups": ",berlin,"}},
	}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("target groups (-want +got):\n%s", diff)
	}
	if !cmp.Equal(unreached, []string{"gw2"}) {
		t.Errorf("hosts /probe reaches without their ssh settings: %v, want gw2", unreached)
	}
}
