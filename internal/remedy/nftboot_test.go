package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// nftHost is a host with nft whose boot FirewallBootLine reports as out.
func nftHost(out string, files map[string]string) (*targettest.Host, *Env) {
	h := targettest.New("ssh:root@fw")
	for p, d := range files {
		h.Files[p] = d
	}
	h.Answers["nft list table inet wgperf"] = targettest.Answer{Code: 1, Stderr: "Error: No such file or directory; did you mean table 'filter' in family inet?\n"}
	h.On(shell.Join("sh", "-c", FirewallBootLine), out)
	return h, &Env{T: h, Root: "/", Platform: Linux, HasNft: true}
}

const debianNftConf = "#!/usr/sbin/nft -f\n\nflush ruleset\n"

// Issue 40: the include goes into the file nftables.service loads only when
// that service runs at boot; otherwise the plan says "runtime only" and
// shows what would keep it (firewalld's own command under firewalld).
func TestNftChainLastsOnlyWhenLoadedAtBoot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		out      string
		files    map[string]string
		edits    string // the file the include goes into, "" for none
		noteHas  []string
		noteHasn string
	}{
		{"Debian, nftables.service disabled (as shipped)", "nftables disabled\nfirewalld  inactive\n",
			map[string]string{"/etc/nftables.conf": debianNftConf}, "",
			[]string{"runtime only: nftables.service is disabled, so nothing loads /etc/nftables.conf at boot",
				`printf '\n# wgperf fix: its own table\ninclude "%s"\n' '/etc/wgperf/nft/*.nft' >> /etc/nftables.conf && systemctl enable nftables.service`}, "persists"},
		{"Debian, enabled", "nftables enabled\nfirewalld  inactive\n",
			map[string]string{"/etc/nftables.conf": debianNftConf}, "/etc/nftables.conf",
			[]string{"persists: nftables.service is enabled and runs nft -f /etc/nftables.conf at boot, which includes /etc/wgperf/nft/*.nft"}, "runtime only"},
		{"Fedora, nftables.service enabled", "nftables enabled\nfirewalld disabled inactive\n",
			map[string]string{"/etc/sysconfig/nftables.conf": "# include \"/etc/nftables/main.nft\"\n"}, "/etc/sysconfig/nftables.conf",
			[]string{"runs nft -f /etc/sysconfig/nftables.conf at boot"}, "runtime only"},
		{"Fedora, firewalld (the default)", "nftables disabled\nfirewalld enabled active\n",
			map[string]string{"/etc/sysconfig/nftables.conf": "# include \"/etc/nftables/main.nft\"\n"}, "",
			[]string{"runtime only: firewalld manages this host's firewall",
				"firewall-cmd --permanent --direct --add-rule ipv4 mangle POSTROUTING 0 -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu",
				"firewall-cmd --reload"}, "persists"},
		{"masked", "nftables masked\nfirewalld  \n",
			map[string]string{"/etc/nftables.conf": debianNftConf}, "", []string{"runtime only: nftables.service is masked", "systemctl unmask nftables.service"}, "persists"},
		{"no unit", "nftables \nfirewalld  \n",
			map[string]string{"/etc/nftables.conf": debianNftConf}, "", []string{"runtime only: nftables.service is not installed"}, "persists"},
		{"no systemd", "nosystemd\n",
			map[string]string{"/etc/nftables.conf": debianNftConf}, "", []string{"runtime only: no systemd here"}, "persists"},
		{"enabled, no file", "nftables enabled\n", nil, "", []string{"runtime only: nftables.service is enabled but /etc/nftables.conf does not exist"}, "persists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := nftHost(tc.out, tc.files)
			st, err := must(t)(MSSClamp("wg0", 0, Linux)).Plan(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			var edited string
			for _, f := range st.Files {
				if !strings.HasPrefix(f.Path, nftDir+"/") {
					if edited != "" || !strings.Contains(string(f.New), `include "/etc/wgperf/nft/*.nft"`) {
						t.Errorf("unexpected file change %s:\n%s", f.Path, f.New)
					}
					edited = f.Path
				}
			}
			if edited != tc.edits {
				t.Errorf("include written to %q, want %q", edited, tc.edits)
			}
			notes := strings.Join(st.Notes, "\n")
			for _, w := range tc.noteHas {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
			if strings.Contains(notes, tc.noteHasn) {
				t.Errorf("notes hold %q:\n%s", tc.noteHasn, notes)
			}
		})
	}
}

func TestParseNftBoot(t *testing.T) {
	for out, want := range map[string]NftBoot{
		"nftables enabled\nfirewalld  inactive\n":       {Systemd: true, Nftables: "enabled", Conf: "/etc/nftables.conf"},
		"nftables disabled\nfirewalld enabled active\n": {Systemd: true, Nftables: "disabled", Firewalld: true, Conf: "/etc/nftables.conf"},
		"nftables $(reboot)\n":                          {Systemd: true, Conf: "/etc/nftables.conf"},
		"nosystemd\n":                                   {Conf: "/etc/nftables.conf"},
	} {
		if got := parseNftBoot(out, false); got != want {
			t.Errorf("parseNftBoot(%q) = %+v, want %+v", out, got, want)
		}
	}
}

// Without nft, a rule lasts when iptables-persistent (Debian) or
// iptables-services (RHEL) restores its file at boot; otherwise, and under
// firewalld, the plan says "runtime only" and what would keep it.
func TestIptablesRuleLastsOnlyWhenRestoredAtBoot(t *testing.T) {
	const rulesV4 = "# Generated by iptables-save v1.8.9\n*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\nCOMMIT\n*mangle\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n"
	const rule = "-A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu"
	for _, tc := range []struct {
		name, out string
		files     map[string]string
		edits     string
		noteHas   string
	}{
		{"Debian, iptables-persistent", "nftables \nnetfilter-persistent enabled\niptables \nfirewalld  \n",
			map[string]string{"/etc/iptables/rules.v4": rulesV4}, "/etc/iptables/rules.v4",
			"persists: netfilter-persistent.service (iptables-persistent) is enabled and restores /etc/iptables/rules.v4 at boot"},
		{"RHEL, iptables-services", "nftables disabled\nnetfilter-persistent \niptables enabled\nfirewalld disabled inactive\n",
			map[string]string{"/etc/sysconfig/iptables": "*filter\nCOMMIT\n"}, "/etc/sysconfig/iptables", "restores /etc/sysconfig/iptables at boot"},
		{"nothing restores them", "nftables \nnetfilter-persistent \niptables \nfirewalld  \n", nil, "", "runtime only: neither netfilter-persistent.service"},
		{"netfilter-persistent disabled", "nftables \nnetfilter-persistent disabled\niptables \nfirewalld  \n",
			map[string]string{"/etc/iptables/rules.v4": rulesV4}, "", "runtime only: neither"},
		{"firewalld", "nftables \nnetfilter-persistent \niptables \nfirewalld enabled active\n", nil, "",
			"runtime only: firewalld manages this host's firewall and restores no iptables file at boot; to keep it: firewall-cmd --permanent --direct --add-rule ipv4 mangle POSTROUTING 0 -o wg0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, env := nftHost(tc.out, tc.files)
			env.HasNft = false
			h.Fail("sh -c 'iptables -t mangle -C "+strings.TrimPrefix(rule, "-A ")+"'", 1)
			st, err := must(t)(MSSClamp("wg0", 0, Linux)).Plan(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			edited := ""
			for _, f := range st.Files {
				edited = f.Path
				if !strings.Contains(string(f.New), "\n"+rule+"\nCOMMIT\n") {
					t.Errorf("%s:\n%s", f.Path, f.New)
				}
			}
			if edited != tc.edits {
				t.Errorf("edited %q, want %q", edited, tc.edits)
			}
			if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, tc.noteHas) {
				t.Errorf("notes lack %q:\n%s", tc.noteHas, n)
			}
		})
	}
}

func TestAddIptablesRules(t *testing.T) {
	for _, tc := range []struct{ old, want string }{
		{"*filter\nCOMMIT\n*mangle\nCOMMIT\n", "*filter\nCOMMIT\n*mangle\n-A X y\nCOMMIT\n"},
		{"*filter\nCOMMIT\n", "*filter\nCOMMIT\n*mangle\n-A X y\nCOMMIT\n"},
		{"", "*mangle\n-A X y\nCOMMIT\n"},
		{"*mangle\n-A X y\nCOMMIT\n", "*mangle\n-A X y\nCOMMIT\n"},
	} {
		if got := string(addIptablesRules([]byte(tc.old), "mangle", []string{"X y"})); got != tc.want {
			t.Errorf("addIptablesRules(%q) = %q, want %q", tc.old, got, tc.want)
		}
	}
}
