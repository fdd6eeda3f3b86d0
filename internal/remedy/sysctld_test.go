package remedy

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// debianSysctl is what a Debian 12 host's boot reads for sysctls (recorded
// with ls on bookworm): systemd's and procps' defaults, and the link
// 99-sysctl.conf -> ../sysctl.conf (listed, and read, as the link's name).
func debianSysctl(etcSysctlConf string) SysctlListing {
	return SysctlListing{Systemd: true, Files: []SysctlFile{
		{Path: "/etc/sysctl.d/99-sysctl.conf", Data: etcSysctlConf},
		{Path: "/usr/lib/sysctl.d/50-default.conf", Data: "net.ipv4.conf.default.rp_filter = 2\nnet.ipv4.conf.*.rp_filter = 2\n-net.ipv4.conf.all.rp_filter\n"},
		{Path: "/usr/lib/sysctl.d/50-pid-max.conf", Data: "kernel.pid_max = 4194304\n"},
		{Path: "/lib/sysctl.d/50-pid-max.conf", Data: "kernel.pid_max = 4194304\n"}, // /lib -> usr/lib
		{Path: "/etc/sysctl.conf", Data: etcSysctlConf},
	}}
}

// The sysctl.d(5) order decides which of wgperf's files sets a key last at
// boot: its own 90-wgperf.conf, 99-wgperf.conf after a file that sorts later
// (Debian's /etc/sysctl.conf through 99-sysctl.conf above all), or none.
func TestResolveSysctl(t *testing.T) {
	const key, want = "net.core.rmem_max", "26214400"
	lower := "# /etc/sysctl.conf - Configuration file for setting system variables\nnet.core.rmem_max = 212992\n"
	for _, tc := range []struct {
		name     string
		l        SysctlListing
		p        Platform
		file     string
		over     string
		noteHas  string
		loaderIs string
	}{
		{"Debian, sysctl.conf silent", debianSysctl("#net.core.rmem_max = 1\n"), Linux, SysctlConf, "", "persists: /etc/sysctl.d/90-wgperf.conf sets net.core.rmem_max last", "systemd-sysctl.service"},
		{"Debian, a lower value in /etc/sysctl.conf", debianSysctl(lower), Linux, SysctlLateConf, "/etc/sysctl.d/99-sysctl.conf",
			"persists: /etc/sysctl.d/99-wgperf.conf, not 90-wgperf.conf: /etc/sysctl.d/99-sysctl.conf sets net.core.rmem_max = 212992 after it", ""},
		{"sysctl.conf sets the same value", debianSysctl("net.core.rmem_max=26214400\n"), Linux, SysctlConf, "", "persists:", ""},
		{"slash-separated key, ignore-errors dash", debianSysctl("-net/core/rmem_max = 4096\n"), Linux, SysctlLateConf, "/etc/sysctl.d/99-sysctl.conf", "", ""},
		{"a glob over the key", debianSysctl("net.core.*mem_max = 4096\n"), Linux, SysctlLateConf, "/etc/sysctl.d/99-sysctl.conf", "", ""},
		{"later file reset by an even later one", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: "/usr/lib/sysctl.d/95-x.conf", Data: "net.core.rmem_max = 1\n"},
			{Path: "/etc/sysctl.d/96-y.conf", Data: "net.core.rmem_max = 26214400\n"},
		}}, Linux, SysctlConf, "", "persists:", ""},
		{"/run masks /usr/lib of the same name", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: "/run/sysctl.d/95-x.conf", Data: "# nothing\n"},
			{Path: "/usr/lib/sysctl.d/95-x.conf", Data: "net.core.rmem_max = 1\n"},
		}}, Linux, SysctlConf, "", "persists:", ""},
		{"/usr/lib file sorts after 90", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: "/usr/lib/sysctl.d/95-x.conf", Data: "net.core.rmem_max = 1\n"},
		}}, Linux, SysctlLateConf, "/usr/lib/sysctl.d/95-x.conf", "", ""},
		{"a file sorts after 99-wgperf.conf", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: "/etc/sysctl.d/99-zz-local.conf", Data: "net.core.rmem_max = 1\n"},
		}}, Linux, "", "/etc/sysctl.d/99-zz-local.conf",
			"runtime only: /etc/sysctl.d/99-zz-local.conf sets net.core.rmem_max = 1 after any file wgperf writes", ""},
		{"our own 99 file holds an old value", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: SysctlConf, Data: "net.core.rmem_max = 26214400\n"},
			{Path: SysctlLateConf, Data: "net.core.rmem_max = 8388608\n"},
		}}, Linux, SysctlLateConf, SysctlLateConf, "", ""},
		{"no systemd: procps reads /etc/sysctl.conf last", SysctlListing{Files: []SysctlFile{
			{Path: "/etc/sysctl.conf", Data: lower},
		}}, Linux, "", "/etc/sysctl.conf", "runtime only:", "sysctl --system (procps' init script)"},
		{"systemd without the 99-sysctl.conf link ignores /etc/sysctl.conf", SysctlListing{Systemd: true, Files: []SysctlFile{
			{Path: "/etc/sysctl.conf", Data: lower},
		}}, Linux, SysctlConf, "", "persists:", ""},
		{"OpenWrt: /etc/sysctl.conf is read last", SysctlListing{Files: []SysctlFile{
			{Path: "/etc/sysctl.d/10-default.conf", Data: "net.ipv4.ip_forward=1\n"},
			{Path: "/etc/sysctl.conf", Data: lower},
		}}, OpenWrt, "", "/etc/sysctl.conf", "runtime only:", "/etc/init.d/sysctl (procd)"},
		{"OpenWrt, silent", SysctlListing{Files: []SysctlFile{
			{Path: "/etc/sysctl.d/10-default.conf", Data: "net.ipv4.ip_forward=1\n"},
			{Path: "/etc/sysctl.d/11-nf-conntrack.conf", Data: "net.netfilter.nf_conntrack_max=16384\n"},
		}}, OpenWrt, SysctlConf, "", "persists:", "/etc/init.d/sysctl (procd)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ResolveSysctl(tc.l, tc.p, key, want)
			if b.File != tc.file || b.Over != tc.over {
				t.Errorf("file %q over %q, want %q over %q (note %q)", b.File, b.Over, tc.file, tc.over, b.Note)
			}
			if !strings.Contains(b.Note, tc.noteHas) {
				t.Errorf("note %q\nwant it to hold %q", b.Note, tc.noteHas)
			}
			if tc.loaderIs != "" && b.Loader != tc.loaderIs {
				t.Errorf("loader %q, want %q", b.Loader, tc.loaderIs)
			}
		})
	}
}

// debianHost answers the plan's sysctl questions as Debian 12 would, with
// the lower net.core.rmem_max of its /etc/sysctl.conf that wins at boot over
// /etc/sysctl.d/90-wgperf.conf (99-sysctl.conf links to it).
func debianHost() (*targettest.Host, *Env) {
	h := targettest.New("ssh:root@deb")
	conf := "# /etc/sysctl.conf\nnet.core.rmem_max = 212992\n"
	h.Files["/etc/sysctl.conf"] = conf
	h.Files["/etc/sysctl.d/99-sysctl.conf"] = conf
	h.Files["/usr/lib/sysctl.d/50-default.conf"] = "net.ipv4.conf.all.rp_filter = 2\n"
	h.On("sysctl -n net.core.rmem_max", "212992\n")
	h.On("sh -c 'test -d /run/wireguard'", "")
	env := &Env{T: h, Root: "/", Platform: Linux, HasNft: true}
	h.On(SysctlListLine(env), "file /etc/sysctl.d/99-sysctl.conf\nfile /usr/lib/sysctl.d/50-default.conf\nfile /etc/sysctl.conf\nsystemd\n")
	h.Fallback = func(line string) (targettest.Answer, bool) {
		if strings.Contains(line, "/var/run/wireguard/") {
			return targettest.Answer{}, true // no userspace WireGuard
		}
		return targettest.Answer{}, false
	}
	return h, env
}

// Issue 40: a lower net.core.rmem_max in Debian's /etc/sysctl.conf wins at
// boot over 90-wgperf.conf; the plan writes 99-wgperf.conf, which sorts
// after 99-sysctl.conf, and says so.
func TestSysctlPlanOutlastsSysctlConf(t *testing.T) {
	h, env := debianHost()
	st, err := must(t)(Sysctl("net.core.rmem_max", "26214400")).Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range st.Files {
		paths = append(paths, f.Path)
	}
	if d := cmp.Diff([]string{SysctlLateConf}, paths); d != "" {
		t.Fatalf("files written (-want +got):\n%s\nran: %q", d, h.Ran())
	}
	if f := st.Files[0]; f.Existed || !strings.Contains(string(f.New), "\nnet.core.rmem_max = 26214400\n") {
		t.Errorf("99-wgperf.conf: existed %v, content %q", f.Existed, f.New)
	}
	if n := strings.Join(st.Notes, "\n"); !strings.Contains(n, "persists: /etc/sysctl.d/99-wgperf.conf, not 90-wgperf.conf: /etc/sysctl.d/99-sysctl.conf sets net.core.rmem_max = 212992") ||
		!strings.Contains(n, "systemd-sysctl.service") {
		t.Errorf("notes do not say why 99-wgperf.conf wins:\n%s", n)
	}
}
