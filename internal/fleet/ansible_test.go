package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/target"
)

const ansibleDir = testdata + "/ansible"

// listed is "ansible-inventory --list" output: every host's resolved
// variables and the groups that list hosts.
type listed struct {
	hostvars map[string]map[string]string
	groups   map[string][]string // host -> groups listing it
}

func readListed(t *testing.T, path string) listed {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]struct {
		Hosts    []string
		Hostvars map[string]map[string]any
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	l := listed{hostvars: map[string]map[string]string{}, groups: map[string][]string{}}
	for host, vars := range doc["_meta"].Hostvars {
		l.hostvars[host] = map[string]string{}
		for k, v := range vars {
			s := ""
			switch v := v.(type) {
			case string:
				s = v
			case float64:
				s = strconv.FormatFloat(v, 'f', -1, 64)
			case bool:
				s = strconv.FormatBool(v)
			}
			l.hostvars[host][canonical(k)] = s
		}
	}
	for g, v := range doc {
		for _, h := range v.Hosts {
			if g != "ungrouped" {
				l.groups[h] = append(l.groups[h], g)
			}
		}
	}
	return l
}

type resolved struct {
	Target string
	SSH    target.HostSSH
	Groups []string
}

func byName(hosts []Host) map[string]resolved {
	out := map[string]resolved{}
	for _, h := range hosts {
		g := append([]string(nil), h.Groups...)
		sort.Strings(g)
		out[h.Name] = resolved{h.Target.String(), h.SSH, g}
	}
	return out
}

// fromListed is what the hosts of an ansible-inventory listing resolve to.
func fromListed(t *testing.T, l listed, only map[string]bool) map[string]resolved {
	t.Helper()
	out := map[string]resolved{}
	for host, vars := range l.hostvars {
		if only != nil && !only[host] {
			continue
		}
		spec, ssh, _, err := hostSettings(host, vars)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		g := append([]string(nil), l.groups[host]...)
		sort.Strings(g)
		out[host] = resolved{spec, ssh, g}
	}
	return out
}

// An inventory with ranges, [group:vars], :children, group_vars/ (files and
// folders), host_vars/, a bastion and become resolves, host by host, to
// what "ansible-inventory --list" resolved for it (recorded in testdata),
// with --limit selecting the same hosts.
func TestInventoryAsAnsibleResolvesIt(t *testing.T) {
	if !yamlInventories {
		// The router build reads no YAML: it refuses the inventory rather
		// than reach its hosts without their variables.
		_, err := Load(context.Background(), filepath.Join(ansibleDir, "hosts.ini"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "group_vars/ and host_vars/ are YAML, which the router build leaves out") || strings.Contains(err.Error(), "\n") {
			t.Errorf("router build: %v, want a one-line refusal", err)
		}
		return
	}
	inv, err := Load(context.Background(), filepath.Join(ansibleDir, "hosts.ini"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fromListed(t, readListed(t, filepath.Join(ansibleDir, "list.json")), nil)
	if diff := cmp.Diff(want, byName(inv.Hosts)); diff != "" {
		t.Errorf("hosts differ from ansible-inventory --list (-ansible +wgperf):\n%s", diff)
	}
	// The mapping itself, pinned for two hosts.
	jump := []string{"ProxyJump=jump@bastion.example.net:2200", "StrictHostKeyChecking=yes"}
	for name, w := range map[string]resolved{
		"wg-ber-core":          {"ssh:deploy@198.51.100.11:2222", target.HostSSH{Options: jump, Become: true, BecomeUser: "root"}, []string{"berlin", "servers"}},
		"gw-hhb":               {"ssh:ops@gw-hhb", target.HostSSH{IdentityFile: "/etc/wgperf/keys/hamburg", Options: jump}, []string{"hamburg"}},
		"gw-ber02.example.net": {"ssh:admin@gw-ber02.example.net:22", target.HostSSH{Options: jump, Become: true}, []string{"berlin"}},
	} {
		if diff := cmp.Diff(w, byName(inv.Hosts)[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// Its ignored variables are its playbooks' and an interpreter: listed, not warned of.
	if w := inv.Warning(); w != "" || strings.Join(inv.Ignored, ", ") != "ansible_python_interpreter, ntp_servers, site" {
		t.Errorf("warning %q, ignored %q; want none, and the variables wgperf ignores listed", w, inv.Ignored)
	}

	limit := readListed(t, filepath.Join(ansibleDir, "list-limit.json"))
	limited, err := Load(context.Background(), filepath.Join(ansibleDir, "hosts.ini"), LoadOptions{Limit: "routers:!gw-hh*:&~^[gw]"})
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]bool{}
	for h := range limit.hostvars {
		only[h] = true
	}
	if diff := cmp.Diff(fromListed(t, readListed(t, filepath.Join(ansibleDir, "list.json")), only), byName(limited.Hosts)); diff != "" {
		t.Errorf("--limit selects other hosts than ansible's (-ansible +wgperf):\n%s", diff)
	}

	// ansible-inventory's own JSON, read as an inventory, gives the same.
	fromJSON, err := Load(context.Background(), filepath.Join(ansibleDir, "list.json"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, byName(fromJSON.Hosts)); diff != "" {
		t.Errorf("reading list.json (-ansible +wgperf):\n%s", diff)
	}
}

// Where Ansible is installed, its output for the fixture is still what
// testdata recorded (pip install ansible-core to run this).
func TestRecordedAnsibleListing(t *testing.T) {
	bin, err := exec.LookPath("ansible-inventory")
	if err != nil {
		t.Skip("ansible-inventory is not installed: the recorded listing is not re-checked")
	}
	for file, extra := range map[string][]string{"list.json": nil, "list-limit.json": {"--limit", "routers:!gw-hh*:&~^[gw]"}} {
		out, err := exec.Command(bin, append([]string{"-i", filepath.Join(ansibleDir, "hosts.ini"), "--list"}, extra...)...).Output()
		if err != nil {
			t.Fatalf("ansible-inventory: %v", err)
		}
		var got, want any
		b, _ := os.ReadFile(filepath.Join(ansibleDir, file))
		if json.Unmarshal(out, &got) != nil || json.Unmarshal(b, &want) != nil {
			t.Fatal("ansible-inventory printed no JSON")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s is not what ansible-inventory prints now (-recorded +now):\n%s", file, diff)
		}
	}
}

// diamonds is an inventory of n levels of [gK:children] diamonds: 2^n paths
// from the top to the one host, 2n+1 groups.
func diamonds(n int) string {
	var b strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, "[g%d:children]\na%d\nb%d\n[a%d:children]\ng%d\n[b%d:children]\ng%d\n", k, k, k, k, k+1, k, k+1)
	}
	fmt.Fprintf(&b, "[g0:vars]\nansible_user=top\n[g%d]\nleaf ansible_port=2222\n", n)
	return b.String()
}

// Nested :children diamonds resolve in time linear in their size (a
// resolver walking paths takes 2^64 steps here), a cycle is an error naming
// it, and a cancelled context stops a resolution.
func TestInventoryGroupsResolveLinearly(t *testing.T) {
	done := make(chan struct{})
	var hosts []Host
	var err error
	go func() {
		defer close(done)
		hosts, err = ParseInventory(strings.NewReader(diamonds(64)))
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("64 levels of group diamonds did not resolve within a minute: resolution walks paths")
	}
	if err != nil || len(hosts) != 1 || hosts[0].Target.String() != "ssh:top@leaf:2222" {
		t.Fatalf("got %v, %v; want ssh:top@leaf:2222", hosts, err)
	}

	_, err = ParseInventory(strings.NewReader("[a:children]\nb\n[b:children]\nc\n[c:children]\na\n[c]\nbox\n"))
	if err == nil || !strings.Contains(err.Error(), "groups form a cycle: a → b → c → a") {
		t.Errorf("cycle: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "hosts.ini")
	if err := os.WriteFile(path, []byte(diamonds(64)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, path, LoadOptions{}); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("a cancelled resolution returned %v", err)
	}
}

func BenchmarkInventoryDiamonds(b *testing.B) {
	in := diamonds(64)
	for b.Loop() {
		if _, err := ParseInventory(strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}
