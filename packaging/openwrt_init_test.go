package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runInit runs the procd script's start_service (and service_triggers) with
// the uci file config ("" for none) as /etc/config/wgperf, under BusyBox's
// ash as on OpenWrt when it is installed, with OpenWrt's configuration and
// procd functions from testdata/openwrt/functions.sh. env adds interface
// addresses (NET_lan=192.168.1.1). It returns what procd was told, and the
// script's standard error.
func runInit(t *testing.T, config string, env ...string) (procd, stderr string) {
	t.Helper()
	dir := t.TempDir()
	stubs, err := filepath.Abs("testdata/openwrt/functions.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(repoFile(t, "deploy/openwrt/wgperf-exporter"))
	const network = ". /lib/functions/network.sh"
	if strings.Count(script, network) != 1 {
		t.Fatalf("the procd script should load %s once", network)
	}
	script = strings.Replace(script, network, ": network.sh is loaded", 1)
	if err := os.WriteFile(filepath.Join(dir, "wgperf-exporter"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, "wgperf"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := []string{"sh"}
	if _, err := exec.LookPath("busybox"); err == nil {
		sh = []string{"busybox", "sh"}
	}
	cmd := exec.Command(sh[0], append(sh[1:], "-c", `. "$1"; . "$2"; start_service; echo "start_service $?"; service_triggers`, "-", stubs, filepath.Join(dir, "wgperf-exporter"))...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "UCI_CONFIG_DIR=" + dir}, env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s%s", cmd.Args, err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// The package installs the procd script enabled, as OpenWrt's
// default_postinst enables every init script: what keeps the exporter (whose
// metrics name peers' keys, endpoints and allowed IPs) from starting is the
// uci file it ships, off and on loopback until the owner says otherwise.
func TestOpenWrtInitScript(t *testing.T) {
	shipped := string(repoFile(t, "deploy/openwrt/wgperf.config"))
	enabled := strings.Replace(shipped, "option enabled '0'", "option enabled '1'", 1)
	if enabled == shipped {
		t.Fatal("deploy/openwrt/wgperf.config does not hold option enabled '0'")
	}
	lan := strings.Replace(enabled, "option listen_interface 'loopback'", "option listen_interface 'lan'", 1) +
		"\tlist probe_allow 'ssh:root@192.168.1.0/24'\n\tlist probe_allow 'ssh:admin@gw-*.lan'\n\toption host 'ssh:root@10.0.0.2'\n"
	for _, tc := range []struct {
		name, config string
		env          []string
		want         []string // lines procd must be told, in order
		refused      string   // a line on stderr when it must not start
	}{
		{name: "no config file", want: []string{"start_service 0"}},
		{name: "as shipped", config: shipped, want: []string{"start_service 0"}},
		{name: "enabled", config: enabled, env: []string{"NET_loopback=127.0.0.1"}, want: []string{
			"open_instance",
			"set_param command /usr/bin/wgperf exporter --web.listen-address 127.0.0.1:9723 --host local --interval 30s",
			"close_instance", "start_service 0", "reload_trigger wgperf", "interface_trigger loopback"}},
		{name: "on the LAN address", config: lan, env: []string{"NET_lan=192.168.1.1"}, want: []string{
			"open_instance",
			"set_param command /usr/bin/wgperf exporter --web.listen-address 192.168.1.1:9723 --host ssh:root@10.0.0.2 --interval 30s",
			"append_param command --probe.allow ssh:root@192.168.1.0/24",
			"append_param command --probe.allow ssh:admin@gw-*.lan",
			"close_instance", "start_service 0", "interface_trigger lan"}},
		// listen_interface is the interface's addresses, IPv6 ones too.
		{name: "on the LAN's IPv4 and IPv6 addresses", config: lan, env: []string{"NET_lan=192.168.1.1", "NET6_lan=fd00:1::1 2001:db8::1"}, want: []string{
			"open_instance",
			"set_param command /usr/bin/wgperf exporter --web.listen-address 192.168.1.1:9723 --web.listen-address [fd00:1::1]:9723 --web.listen-address [2001:db8::1]:9723 --host ssh:root@10.0.0.2 --interval 30s",
			"close_instance", "start_service 0"}},
		{name: "an IPv6-only LAN", config: lan, env: []string{"NET6_lan=2001:db8::1"}, want: []string{
			"set_param command /usr/bin/wgperf exporter --web.listen-address [2001:db8::1]:9723 --host ssh:root@10.0.0.2 --interval 30s",
			"start_service 0"}},
		{name: "LAN without an address", config: lan, want: []string{"start_service 1"},
			refused: "wgperf-exporter: interface lan has no IPv4 or IPv6 address: not started"},
		// The router build refuses --web.config.file: the script says so
		// instead of starting an exporter procd would respawn until it gives up.
		{name: "web_config", config: enabled + "\toption web_config '/etc/wgperf/web-config.yml'\n", env: []string{"NET_loopback=127.0.0.1"},
			want: []string{"start_service 1"}, refused: "wgperf-exporter: option web_config: the router build has no TLS"},
		{name: "explicit address", config: enabled + "\toption listen '[::1]:9723'\n", want: []string{
			"set_param command /usr/bin/wgperf exporter --web.listen-address [::1]:9723 --host local --interval 30s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procd, stderr := runInit(t, tc.config, tc.env...)
			rest := procd
			for _, w := range tc.want {
				i := strings.Index(rest, w+"\n")
				if i < 0 {
					t.Fatalf("procd was not told %q (in order):\n%s", w, procd)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(tc.want[0], "start_service") && strings.Contains(procd, "open_instance") {
				t.Errorf("an instance was started:\n%s", procd)
			}
			if tc.refused != "" && !strings.Contains(stderr, tc.refused) {
				t.Errorf("stderr %q, want %q", stderr, tc.refused)
			}
		})
	}
}
