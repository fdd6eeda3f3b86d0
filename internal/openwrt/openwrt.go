// Package openwrt says how to install a missing program on OpenWrt, whose
// package manager changed with 25.12: apk (apk-tools v3) from then on, opkg
// before. Every hint that names an OpenWrt package says both (leaf).
package openwrt

import "strings"

// Install is the command line that installs the packages on OpenWrt, both
// ways: "apk add ip-full (opkg install ip-full before OpenWrt 25)".
func Install(pkgs ...string) string {
	p := strings.Join(pkgs, " ")
	return "apk add " + p + " (opkg install " + p + " before OpenWrt 25)"
}
