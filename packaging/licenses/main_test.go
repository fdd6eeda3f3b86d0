package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParseGoList: the distinct modules the packages link, the main module
// and the standard library's packages left out, a replaced module read from
// its replacement.
func TestParseGoList(t *testing.T) {
	in := `{"Module": {"Path": "github.com/wgperf/wgperf", "Main": true, "Dir": "/src/wgperf"}}
{}
{"Module": {"Path": "github.com/spf13/pflag", "Version": "v1.0.10", "Dir": "/mod/github.com/spf13/pflag@v1.0.10"}}
{"Module": {"Path": "github.com/spf13/cobra", "Version": "v1.10.2", "Dir": "/mod/github.com/spf13/cobra@v1.10.2"}}
{"Module": {"Path": "github.com/spf13/pflag", "Version": "v1.0.10", "Dir": "/mod/github.com/spf13/pflag@v1.0.10"}}
{"Module": {"Path": "golang.org/x/sys", "Version": "v0.49.0", "Replace": {"Path": "../sys", "Dir": "/src/sys"}}}
`
	got, err := ParseGoList(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Module{
		{Path: "github.com/spf13/cobra", Version: "v1.10.2", Dir: "/mod/github.com/spf13/cobra@v1.10.2"},
		{Path: "github.com/spf13/pflag", Version: "v1.0.10", Dir: "/mod/github.com/spf13/pflag@v1.0.10"},
		{Path: "golang.org/x/sys", Version: "v0.49.0", Dir: "/src/sys"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if _, err := ParseGoList(strings.NewReader(`{"Module": {"Path": "example.com/gone", "Version": "v1.0.0"}}`)); err == nil {
		t.Error("a module outside the module cache was accepted")
	}
}

// TestLicenseFiles: LICENSE, LICENSE.txt, COPYING, NOTICE and PATENTS at a
// module's root are its licence files; a Go file or folder so named is not.
func TestLicenseFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"LICENSE.txt": "Apache", "NOTICE": "notice", "PATENTS": "grant",
		"license.go": "package x", "README.md": "read me", "COPYING": "GPL? no: MIT"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "LICENSES"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := LicenseFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if want := []string{"COPYING", "LICENSE.txt", "NOTICE", "PATENTS"}; !reflect.DeepEqual(names, want) {
		t.Errorf("licence files %v, want %v", names, want)
	}
}

// TestSBOMLicenses reads cyclonedx-gomod's licence IDs (and an expression)
// by module and version, the standard library as std.
func TestSBOMLicenses(t *testing.T) {
	doc := `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [
 {"name": "github.com/spf13/cobra", "version": "v1.10.2", "licenses": [{"license": {"id": "Apache-2.0"}}]},
 {"name": "example.com/dual", "version": "v0.1.0", "licenses": [{"license": {"id": "MIT"}}, {"license": {"id": "Apache-2.0"}}]},
 {"name": "example.com/expr", "version": "v0.2.0", "licenses": [{"expression": "MIT OR Apache-2.0"}]},
 {"name": "std", "version": "go1.26.8", "licenses": [{"license": {"id": "BSD-3-Clause"}}]},
 {"name": "example.com/none", "version": "v1.0.0"}]}`
	got, err := SBOMLicenses([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"github.com/spf13/cobra@v1.10.2": {"Apache-2.0"}, "example.com/dual@v0.1.0": {"Apache-2.0", "MIT"},
		"example.com/expr@v0.2.0": {"MIT OR Apache-2.0"}, "std": {"BSD-3-Clause"}, "example.com/none@v1.0.0": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, err := SBOMLicenses([]byte(`{"bomFormat": "SPDX"}`)); err == nil {
		t.Error("a document that is not CycloneDX was read")
	}
}

// TestDebianCopyright: wgperf's own paragraphs first, then one per module
// with the notices its texts state (not Apache's template line) and its text
// inline, blank lines as " .", the Apache License as Debian's own copy.
func TestDebianCopyright(t *testing.T) {
	own := "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: 2026 The wgperf authors\nLicense: MIT\n"
	mods := []Module{
		{Path: "std", Version: "go1.26.8", IDs: []string{"BSD-3-Clause"}, Files: []File{{"LICENSE", []byte("Copyright 2009 The Go Authors.\n\nRedistribution...\n")}}},
		{Path: "github.com/spf13/cobra", Version: "v1.10.2", IDs: []string{"Apache-2.0"}, Files: []File{{"LICENSE.txt",
			[]byte("Apache License\n\n   Copyright [yyyy] [name of copyright owner]\n")}, {"NOTICE", []byte("Copyright 2015 The Example Authors.\n")}}},
	}
	got := string(DebianCopyright([]byte(own), mods))
	want := own + `
Files: go/src/*
Comment: Go standard library (go1.26.8), linked into /usr/bin/wgperf
Copyright: Copyright 2009 The Go Authors.
License: BSD-3-Clause
 Copyright 2009 The Go Authors.
 .
 Redistribution...

Files: github.com/spf13/cobra/*
Comment: github.com/spf13/cobra v1.10.2, linked into /usr/bin/wgperf
Copyright: Copyright 2015 The Example Authors.
License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0
 can be found in /usr/share/common-licenses/Apache-2.0 (LICENSE.txt).
 .
 Copyright 2015 The Example Authors.
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	notice := string(Notice(mods))
	for _, s := range []string{"  github.com/spf13/cobra v1.10.2: Apache-2.0\n", "--- LICENSE.txt ---\n\nApache License\n", "Go standard library (go1.26.8) (BSD-3-Clause)"} {
		if !strings.Contains(notice, s) {
			t.Errorf("THIRD_PARTY_LICENSES lacks %q:\n%s", s, notice)
		}
	}
}
