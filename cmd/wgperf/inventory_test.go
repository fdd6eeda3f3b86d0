package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// --list-hosts shows what --limit selects across repeated --inventory
// sources and a directory, and logs into nothing: the hosts here do not
// exist, and a run that tried them would take their timeouts and report
// them unreachable (issue 42).
func TestDiagnoseListHosts(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	for name, content := range map[string]string{
		"site/10-routers": "[routers]\ngw1 ansible_host=192.0.2.1 ansible_user=root\ngw2 ansible_host=192.0.2.2\n",
		"site/20-lab":     "[lab]\nlab1 ansible_host=192.0.2.9\n[routers:vars]\nansible_port=2222\n",
		"site/notes.md":   "[not an inventory\n",
		"extra.ini":       "[routers]\ngw3 ansible_host=192.0.2.3\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	args := []string{"diagnose", "--inventory", site, "--inventory", filepath.Join(dir, "extra.ini"), "--limit", "routers:!gw2", "--host-timeout", "1ms", "--list-hosts"}
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	want := "gw1  ssh:root@192.0.2.1:2222\ngw3  ssh:192.0.2.3:2222\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("--list-hosts (-want +got):\n%s", diff)
	}
	out.Reset()
	if code := run(append(args, "--json"), &out, &errOut); code != exitOK {
		t.Fatalf("--list-hosts --json: exit %d: %s", code, errOut.String())
	}
	var doc struct {
		Kind  string
		Hosts []struct{ Name, Target string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Kind != "inventory" || len(doc.Hosts) != 2 || doc.Hosts[1].Target != "ssh:192.0.2.3:2222" {
		t.Errorf("--list-hosts --json: %+v, %v\n%s", doc, err, out.String())
	}
	// The same list from "wgperf inventory"; --list-hosts needs an inventory.
	out.Reset()
	if code := run([]string{"inventory", "--inventory", site, "--inventory", filepath.Join(dir, "extra.ini"), "--limit", "routers:!gw2"}, &out, &errOut); code != exitOK || out.String() != want {
		t.Errorf("inventory: exit %d, %q", code, out.String())
	}
	errOut.Reset()
	if code := run([]string{"diagnose", "--list-hosts"}, &out, &errOut); code != exitFailed || !strings.Contains(errOut.String(), "--list-hosts lists the hosts of an --inventory") {
		t.Errorf("--list-hosts without --inventory: exit %d, %s", code, errOut.String())
	}
}

// wgperf inventory --prometheus prints Prometheus file_sd JSON of the
// exporter's /probe targets, with the inventory's names and groups as
// labels, and names the hosts /probe reaches without their ssh settings.
func TestInventoryPrometheus(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(inv, []byte("netns:site-a\n[routers]\ngw1 ansible_host=192.0.2.1 ansible_user=root\ngw2 ansible_ssh_private_key_file=/k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"inventory", "--inventory", inv, "--prometheus"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not file_sd JSON: %v\n%s", err, out.String())
	}
	if len(got) != 3 || got[1].Targets[0] != "ssh:root@192.0.2.1" || got[1].Labels["wgperf_group"] != "routers" || got[1].Labels["wgperf_host"] != "gw1" || got[0].Targets[0] != "netns:site-a" {
		t.Errorf("file_sd:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "own ssh settings, not the inventory's") || !strings.Contains(errOut.String(), "gw2") {
		t.Errorf("no warning about gw2's key: %q", errOut.String())
	}
}

// Ansible users' spellings: -i and -l, and ANSIBLE_INVENTORY (comma
// separated, ~/ the home folder) where an inventory is needed and none is
// named; a diagnose about this host or files stays about them.
func TestAnsibleInventoryFlagsAndEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for name, content := range map[string]string{
		"routers.ini": "[routers]\ngw1 ansible_host=192.0.2.1 ansible_user=root ansible_password=x site=berlin\n",
		"lab.ini":     "[lab]\nlab1 ansible_host=192.0.2.9 ansible_password=y site=lab\n",
	} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	routers := filepath.Join(home, "routers.ini")
	warning := "wgperf: inventory: Ansible settings wgperf ignores (it reaches hosts with ansible_host, _port, _user, _connection, the ssh key and args, become): ansible_password\n"
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"diagnose", "-i", routers, "-i", filepath.Join(home, "lab.ini"), "-l", "lab", "--list-hosts"}, "lab1  ssh:192.0.2.9\n"},
		{"", []string{"inventory", "-i", routers}, "gw1  ssh:root@192.0.2.1\n"},
		{"~/routers.ini, ~/lab.ini", []string{"inventory"}, "gw1   ssh:root@192.0.2.1\nlab1  ssh:192.0.2.9\n"},
		{"~/routers.ini,~/lab.ini", []string{"diagnose", "-l", "routers", "--list-hosts"}, "gw1  ssh:root@192.0.2.1\n"},
		{routers, []string{"diagnose", "--list-hosts"}, "gw1  ssh:root@192.0.2.1\n"},
	} {
		t.Setenv("ANSIBLE_INVENTORY", tc.env)
		var out, errOut bytes.Buffer
		if code := run(tc.args, &out, &errOut); code != exitOK || out.String() != tc.want || errOut.String() != warning {
			t.Errorf("ANSIBLE_INVENTORY=%q wgperf %s: exit %d\nstdout %q, want %q\nstderr %q, want %q (once, however many hosts set it)",
				tc.env, strings.Join(tc.args, " "), code, out.String(), tc.want, errOut.String(), warning)
		}
	}
	// A diagnose of files (or of this host) is not turned into a fleet's.
	t.Setenv("ANSIBLE_INVENTORY", routers)
	var out, errOut bytes.Buffer
	run([]string{"diagnose", "--from", snapshot("lab-healthy-a.json"), "--json"}, &out, &errOut)
	if !strings.Contains(out.String(), `"kind": "diagnose"`) || strings.Contains(out.String()+errOut.String(), "192.0.2.1") {
		t.Errorf("diagnose --from with ANSIBLE_INVENTORY set reached the inventory:\n%s%s", out.String(), errOut.String())
	}
	// Without either, one line says what to give.
	t.Setenv("ANSIBLE_INVENTORY", "")
	errOut.Reset()
	if code := run([]string{"inventory"}, &out, &errOut); code != exitFailed || !strings.Contains(errOut.String(), "or set ANSIBLE_INVENTORY") {
		t.Errorf("inventory without one: exit %d, %q", code, errOut.String())
	}
}
