package packaging

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOpenWrtFeedMakefile checks the feed package against the tree it builds
// (an OpenWrt SDK is needed to build it): the Go package and the command it
// names exist, the procd script it installs is deploy/openwrt's, and it keeps
// golang-package.mk's conventions (host Go, no MIPS16, stripped, version in
// main.version, GO_ARCH_DEPENDS), and builds the router build.
func TestOpenWrtFeedMakefile(t *testing.T) {
	mk := string(repoFile(t, "packaging/openwrt/wgperf/Makefile"))
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^[ \t]*([A-Z_]+):=(.*)$`).FindAllStringSubmatch(mk, -1) {
		vars[m[1]] = strings.TrimSpace(m[2])
	}
	module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(repoFile(t, "go.mod")), "\n", 2)[0], "module"))
	want := map[string]string{
		"PKG_NAME":          "wgperf",
		"GO_PKG":            module,
		"GO_PKG_BUILD_PKG":  module + "/cmd/wgperf",
		"GO_PKG_LDFLAGS":    "-s -w",
		"GO_PKG_LDFLAGS_X":  "main.version=$(PKG_VERSION)",
		"GO_PKG_TAGS":       "router",
		"PKG_BUILD_DEPENDS": "golang/host",
		"PKG_BUILD_FLAGS":   "no-mips16",
		"PKG_LICENSE":       "MIT",
		"PKG_LICENSE_FILES": "LICENSE",
		"DEPENDS":           "$(GO_ARCH_DEPENDS)",
		"PKG_SOURCE":        "$(PKG_NAME)-$(PKG_VERSION).tar.gz",
		"PKG_HASH":          "skip", // openwrtpkg feed fills it in at release
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("Makefile %s = %q, want %q", k, vars[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), strings.TrimPrefix(vars["GO_PKG_BUILD_PKG"], module+"/"))); err != nil {
		t.Errorf("GO_PKG_BUILD_PKG: %v", err)
	}
	for _, line := range []string{
		"include ../../lang/golang/golang-package.mk",
		"$(INSTALL_BIN) $(GO_PKG_BUILD_BIN_DIR)/wgperf $(1)/usr/bin/",
		"$(INSTALL_BIN) $(PKG_BUILD_DIR)/deploy/openwrt/wgperf-exporter $(1)/etc/init.d/wgperf-exporter",
		"$(INSTALL_CONF) $(PKG_BUILD_DIR)/deploy/openwrt/wgperf.config $(1)/etc/config/wgperf",
		"PKG_SOURCE_URL:=https://github.com/wgperf/wgperf/releases/download/v$(PKG_VERSION)/",
		"$(eval $(call BuildPackage,wgperf))",
	} {
		if !strings.Contains(mk, line) {
			t.Errorf("Makefile lacks %q", line)
		}
	}
	// The script it installs is a procd one.
	procd := string(repoFile(t, "deploy/openwrt/wgperf-exporter"))
	for _, s := range []string{"#!/bin/sh /etc/rc.common", "USE_PROCD=1", "PROG=/usr/bin/wgperf", "procd_open_instance"} {
		if !strings.Contains(procd, s) {
			t.Errorf("deploy/openwrt/wgperf-exporter lacks %q", s)
		}
	}
	// Recipe lines are tab-indented, or make rejects them.
	for i, line := range strings.Split(mk, "\n") {
		if strings.HasPrefix(line, "        $(") {
			t.Errorf("Makefile line %d: recipe indented with spaces", i+1)
		}
	}
	if !strings.Contains(string(repoFile(t, "LICENSE")), "Copyright (C) 2026 The wgperf authors") {
		t.Error("LICENSE does not name the wgperf authors")
	}
}
