package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// TestUDPOffloads runs on the LAN gateway of a lab, collected after GRO was
// turned on on its veth uplink as a NIC has it (it forwards its LAN into
// wireguard-go; UDP GRO forwarding off, UDP segmentation on), on the same
// gateway with the veth's own GRO off, and with the kernel releases known to
// mishandle UDP GSO.
func TestUDPOffloads(t *testing.T) {
	gw, veth := loadSnapshot(t, "lab-lan-gro-a.json"), loadSnapshot(t, "lab-lan-fragblocked-a.json")
	kernel := func(release, impl string) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) {
			s.System.Kernel = release
			s.WireGuard[0].Implementation = impl
		}
	}
	action := func(want string) func(t *testing.T, fs []finding.Finding) {
		return func(t *testing.T, fs []finding.Finding) {
			var got []string
			for _, f := range fs {
				for _, x := range f.Fixes {
					if x.Action != nil && x.Action.Kind == remedy.KindOffload {
						got = append(got, x.Action.Params["device"]+":"+x.Action.Params["features"])
					}
				}
			}
			if strings.Join(got, " ") != want {
				t.Errorf("offload fixes %v, want %s", got, want)
			}
		}
	}
	runCases(t, &udpOffloads, []checkCase{
		{name: "forwarding into wireguard-go, GRO forwarding off on the uplink", snap: gw, want: sev(info),
			assert: action("eth0:rx-udp-gro-forwarding=on,rx-gro-list=off")},
		{name: "kernel WireGuard: no note", snap: with(t, gw, kernel("6.18.44", "kernel"))},
		{name: "the uplink does not receive with GRO (the veth as recorded)", snap: veth},
		{name: "not forwarding", snap: with(t, gw, func(s *facts.Snapshot) { s.Sysctls["net.ipv4.ip_forward"] = "0" })},
		{name: "GRO forwarding already on", snap: with(t, gw, func(s *facts.Snapshot) {
			for i := range s.Links {
				if s.Links[i].Name == "eth0" {
					s.Links[i].Offloads["rx-udp-gro-forwarding"] = true
				}
			}
		})},
		{name: "7.1.2 mangles UDP GSO: segmentation off on the uplink (kernel WireGuard too)", snap: with(t, gw, kernel("7.1.2-arch1-1", "kernel")),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				action("eth0:tx-udp-segmentation=off")(t, fs)
				if !strings.Contains(fs[0].Detail, "fixed in 7.1.5") {
					t.Errorf("detail %q", fs[0].Detail)
				}
			}},
		{name: "7.1.5 fixed it", snap: with(t, gw, kernel("7.1.5", "kernel"))},
		{name: "6.6.44 breaks TUN writes of userspace WireGuard", snap: with(t, gw, kernel("6.6.44-1-lts", "userspace")),
			want: sev(warning, info), assert: action("eth0:rx-udp-gro-forwarding=on,rx-gro-list=off")},
		{name: "6.6.44 leaves kernel WireGuard alone", snap: with(t, gw, kernel("6.6.44-1-lts", "kernel"))},
		{name: "no WireGuard", snap: with(t, gw, func(s *facts.Snapshot) { s.WireGuard = nil })},
	})
	for release, want := range map[string][3]int{"6.6.44-1-lts": {6, 6, 44}, "7.0-rc1": {7, 0, 0}, "6.1.0-18-amd64": {6, 1, 0}} {
		if got, ok := kernelRelease(release); !ok || got != want {
			t.Errorf("kernelRelease(%q) = %v, %v; want %v", release, got, ok, want)
		}
	}
}
