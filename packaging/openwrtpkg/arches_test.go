package main

import (
	"os"
	"strings"
	"testing"
)

// Every architecture a package is published under is one OpenWrt builds
// (a misspelt name is a feed opkg never asks for), and under one build only.
func TestArchesAreOpenWrts(t *testing.T) {
	b, err := os.ReadFile("testdata/arch-packages.txt")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			known[l] = true
		}
	}
	seen := map[string]string{}
	for build, arches := range Arches {
		for _, a := range arches {
			if !known[a] {
				t.Errorf("%s: %q is no OpenWrt package architecture", build, a)
			}
			if other, dup := seen[a]; dup {
				t.Errorf("%q is published by both %s and %s", a, other, build)
			}
			seen[a] = build
		}
	}
}
