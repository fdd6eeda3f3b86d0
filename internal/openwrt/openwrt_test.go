package openwrt

import "testing"

func TestInstallNamesApkAndOpkg(t *testing.T) {
	for _, tc := range []struct {
		pkgs []string
		want string
	}{
		{[]string{"ip-full"}, "apk add ip-full (opkg install ip-full before OpenWrt 25)"},
		{[]string{"tc-full", "iperf3"}, "apk add tc-full iperf3 (opkg install tc-full iperf3 before OpenWrt 25)"},
	} {
		if got := Install(tc.pkgs...); got != tc.want {
			t.Errorf("Install(%q) = %q, want %q", tc.pkgs, got, tc.want)
		}
	}
}
