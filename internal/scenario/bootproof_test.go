package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab/guest"
)

// bootReplay runs in the guest as root (a file: vng hands the guest its
// command on the kernel's command line, which holds 2048 bytes): it makes the
// guest's /etc a Debian host's with systemd (a lower net.core.rmem_max in
// /etc/sysctl.conf, read through 99-sysctl.conf; nftables.service enabled; a
// tunnel systemd-networkd makes from a .netdev, one wg-quick@ makes from
// /etc/wireguard and, where NetworkManager is installed, one it makes from
// its keyfile; the wgperf package's boot hook installed and enabled by its
// own postinst), applies wgperf's fixes with "wgperf fix --apply" (kept ones,
// one left unconfirmed), loses every runtime value as a reboot does, and
// replays the boot: systemd-sysctl, nftables.service's ExecStart when
// systemctl says it is enabled, systemd-networkd (which makes the .netdev's
// tunnel), wg-quick@wg1's ExecStart when enabled, NetworkManager itself (on
// a system bus of its own), and the boot hook's ExecStart when it is enabled
// and its condition holds. Then it runs
// bootReplayFedora in the same guest. Both print "value NAME VALUE" lines
// for the test to judge.
const bootReplay = "testdata/boot-replay.sh"

// bootReplayFedora (run by bootReplay, after the Debian pass) makes the
// guest look like Fedora/RHEL to wgperf and to the boot: Fedora's
// nftables.service (nft -f /etc/sysconfig/nftables.conf) enabled,
// iptables-services' iptables.service enabled with /etc/sysconfig/iptables,
// and the boot hook enabled by the .rpm's preset over fedora-release's
// "disable *" (the .rpm's %post, the same postinst script; the hook itself
// runs as in the Debian pass once enabled). It applies an MSS clamp with
// nft and one with iptables on a host without nft, loses the runtime
// values, and replays that boot: nftables.service's ExecStart, and what
// iptables.service's ExecStart does (iptables-restore of
// /etc/sysconfig/iptables: its init script is not on this Debian machine).
// Last, a Debian host with iptables-persistent and no nftables.service: the
// clamp without nft goes to /etc/iptables/rules.v4, which the replay of
// netfilter-persistent's 15-ip4tables plugin restores.
const bootReplayFedora = "testdata/boot-replay-fedora.sh"

// bootReplayOpenWrt (run by bootReplay, after the Fedora pass) makes the
// guest an OpenWrt host to wgperf (/etc/openwrt_release), applies a sysctl
// and an MSS clamp, and one sysctl with --confirm never confirmed, loses the
// runtime values, and replays what procd's /etc/init.d/sysctl, fw4 and rc.d
// do at boot (none is on this Debian machine): BusyBox's sysctl -e -p over
// /etc/sysctl.d/*.conf by name, then /etc/sysctl.conf; fw4's table, then an
// include of each ruleset-post file; each /etc/rc.d S link with "boot",
// where the boot hook enabled as default_postinst enables it rolls the
// unconfirmed fix back (through a stand-in of OpenWrt's /etc/rc.common).
const bootReplayOpenWrt = "testdata/boot-replay-openwrt.sh"

// TestKernelFixesOutlastBoot is issue 40's boot proof: in the kernel guest,
// wgperf's persistent fixes are applied on a Debian host with systemd, then
// on a Fedora/RHEL one and an OpenWrt one, as "wgperf fix --apply" applies
// them, the runtime values are lost as in a reboot, and what each system
// runs at boot is replayed (the guest has no systemd as PID 1, so this is a
// replay, not a second boot): each value comes back as fixed, and the fix
// left unconfirmed is rolled back by the boot hook (Debian, OpenWrt). One
// guest for every case.
func TestKernelFixesOutlastBoot(t *testing.T) {
	exe := kernelLane(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	unit, err := os.ReadFile(filepath.Join(repo, "deploy/systemd/wgperf-fix-rollback.service"))
	if err != nil {
		t.Fatal(err)
	}
	var hook string
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart=wgperf "); ok {
			hook = v
		}
	}
	if hook == "" {
		t.Fatal("the boot hook's ExecStart does not run wgperf")
	}
	// About 150 s alone under TCG, up to twice that beside the fuzz targets.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	res, err := guest.Run(ctx, guest.Options{Progress: func(s string) { t.Log(s) },
		Env: []string{"SYSTEMD_OFFLINE=1", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		[]string{"sh", filepath.Join(repo, "internal/scenario", bootReplay), exe, repo, hook, filepath.Join(repo, "internal/scenario", bootReplayFedora),
			filepath.Join(repo, "internal/scenario", bootReplayOpenWrt)}, &out, storyLog{t})
	t.Logf("guest output:\n%s", out.String())
	if err != nil {
		t.Fatalf("lab vm: %v", err)
	}
	t.Logf("guest: Linux %s under %s, up in %.0f s; whole proof %.0f s", res.Kernel, res.Accel, res.Boot.Seconds(), time.Since(start).Seconds())
	got := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "value" {
			got[f[1]] = f[2]
		}
	}
	for _, c := range []struct{ name, want, why string }{
		{"hook-enabled", "enabled", "the postinst enables the boot hook the Debian way (systemctl is-enabled)"},
		{"nftables-enabled", "enabled", "nftables.service enabled, as the nftables case needs"},
		{"fix-kept", "0", "wgperf fix --apply of the kept fixes"},
		{"fix-unconfirmed", "0", "wgperf fix --apply --confirm 10m"},
		{"reset", "212992 212992 0 0", "the reboot loses every runtime value"},
		{"rmem_max", "26214400", "sysctl: 99-wgperf.conf wins over /etc/sysctl.conf's lower value (systemd-sysctl)"},
		{"rmem-file", "99-wgperf.conf", "sysctl: the plan wrote the key to the file that sorts after 99-sysctl.conf"},
		{"wg0-mtu", "1380", "wg-mtu: MTUBytes= in the .netdev systemd-networkd creates wg0 from"},
		{"wgquick-enabled", "enabled", "wg-quick@wg1 enabled, as the wg-quick case needs"},
		{"wg1-mtu", "1380", "wg-mtu: MTU = in /etc/wireguard/wg1.conf, which wg-quick up wg1 (wg-quick@wg1's ExecStart) sets"},
		{"mss-clamp", "1", "mss-clamp: the include in /etc/nftables.conf that nftables.service loads"},
		{"wmem_max", "212992", "the unconfirmed sysctl, set again by systemd-sysctl, rolled back by the boot hook"},
		{"wmem-files", "0", "the boot hook restored sysctl.d without the unconfirmed line"},
		{"fedora-hook-enabled", "enabled", "Fedora: the preset (90-wgperf.preset, over fedora-release's disable *) enables the boot hook at the .rpm's %post"},
		{"fedora-nftables-enabled", "enabled", "Fedora: nftables.service enabled, as the nftables case needs"},
		{"fedora-iptables-enabled", "enabled", "Fedora: iptables.service (iptables-services) enabled, as the iptables case needs"},
		{"fedora-fix-nft", "0", "Fedora: wgperf fix --apply of the MSS clamp of wg1 (nft)"},
		{"fedora-fix-iptables", "0", "Fedora: wgperf fix --apply of the MSS clamp of wg0 on a host without nft (iptables)"},
		{"fedora-reset", "0", "Fedora: the reboot loses every runtime value"},
		{"fedora-nft-clamp", "1", "mss-clamp on Fedora: the include in /etc/sysconfig/nftables.conf that nftables.service loads"},
		{"fedora-iptables-clamp", "1", "mss-clamp without nft on Fedora/RHEL: the rule in /etc/sysconfig/iptables that iptables.service restores"},
		{"debian-netfilter-persistent-enabled", "enabled", "Debian: netfilter-persistent.service (iptables-persistent) enabled, as the iptables case needs"},
		{"debian-fix-iptables", "0", "Debian: wgperf fix --apply of the MSS clamp of wg0 on a host without nft (iptables)"},
		{"debian-iptables-clamp", "1", "mss-clamp without nft on Debian: the rule in /etc/iptables/rules.v4 that netfilter-persistent restores"},
		{"openwrt-fix", "0", "OpenWrt: wgperf fix --apply of the sysctl and the MSS clamp"},
		{"openwrt-hook-link", "../init.d/wgperf-fix-rollback", "OpenWrt: enabling the boot hook (as default_postinst does) links it as /etc/rc.d/S99wgperf-fix-rollback"},
		{"openwrt-fix-unconfirmed", "0", "OpenWrt: wgperf fix --apply --confirm 10m"},
		{"openwrt-reset", "0 212992 0", "OpenWrt: the reboot loses every runtime value"},
		{"openwrt-wmem_max", "212992", "OpenWrt: the unconfirmed sysctl, set again by /etc/init.d/sysctl, rolled back by the boot hook (rc.d S99)"},
		{"openwrt-wmem-files", "0", "OpenWrt: the boot hook restored sysctl.d without the unconfirmed line"},
		{"openwrt-tcp_mtu_probing", "1", "sysctl on OpenWrt: 90-wgperf.conf over base-files' 10-default.conf, in /etc/init.d/sysctl's order"},
		{"openwrt-mss-clamp", "1", "mss-clamp on OpenWrt: the chain file in fw4's ruleset-post, included after fw4's table"},
		{"openwrt-sysupgrade", "1", "mss-clamp on OpenWrt: its chain file listed in /etc/sysupgrade.conf"},
	} {
		if got[c.name] != c.want {
			t.Errorf("%s = %q, want %q: %s", c.name, got[c.name], c.want, c.why)
		}
	}
	// NetworkManager's keyfile, where NetworkManager is installed (make deps
	// does not install it).
	if got["nm"] == "absent" {
		t.Log("NetworkManager is not installed: its keyfile's wireguard.mtu is not replayed (apt install network-manager)")
	} else {
		for _, c := range []struct{ name, want, why string }{
			{"nm-enabled", "enabled", "NetworkManager.service enabled, as the NetworkManager case needs"},
			{"wg2-mtu-before", "1420", "NetworkManager made wg2 at its own MTU"},
			{"wg2-mtu", "1380", "wg-mtu: wireguard.mtu in wg2's keyfile (nmcli connection modify), which NetworkManager activates wg2 from"},
		} {
			if got[c.name] != c.want {
				t.Errorf("%s = %q, want %q: %s", c.name, got[c.name], c.want, c.why)
			}
		}
	}
	if !strings.Contains(out.String(), "its boot hook (wgperf-fix-rollback) rolls every change back") {
		t.Error("fix --confirm did not see the enabled boot hook")
	}
	if !strings.Contains(out.String(), "wg0: Created") {
		t.Error("systemd-networkd did not create wg0 from its .netdev")
	}
	if !strings.Contains(out.String(), "Rolled back fix") {
		t.Error("the boot hook rolled nothing back")
	}
}
