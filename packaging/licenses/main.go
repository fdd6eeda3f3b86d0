// Command licenses collects, at release build time, the licence texts of
// every Go module linked into wgperf, and of the Go standard library, which
// a static binary carries too. It reads the module list from the go command
// (go list -deps -json, so only what the binary links, not the test-only
// modules of go.mod) and each module's licence files from the module cache,
// with no network; the licence IDs come from the CycloneDX SBOM that
// cyclonedx-gomod wrote for the same build (-sbom), so the packages and the
// SBOM name the same licences. goreleaser's before hook runs it:
//
//	licenses -sbom build/licenses/wgperf.cdx.json -copyright packaging/debian/copyright -o build/licenses ./cmd/wgperf
//
// It writes into the -o folder:
//
//   - THIRD_PARTY_LICENSES: each module's path, version and licence IDs,
//     then its licence files (LICENSE, COPYING, NOTICE, PATENTS...) whole;
//     the archives and the .rpm (%license) carry it, the OpenWrt packages too.
//   - copyright: Debian's machine-readable copyright file, wgperf's own
//     (-copyright) followed by one paragraph per module, its licence texts
//     inline (the .deb's /usr/share/doc/wgperf/copyright).
//
// A linked module without a licence file, or without a licence ID in the
// SBOM, fails the build: a release must not ship what it cannot license.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	out := flag.String("o", "", "the folder to write THIRD_PARTY_LICENSES and copyright into")
	sbom := flag.String("sbom", "", "the CycloneDX SBOM (JSON, cyclonedx-gomod -licenses) of the same build: the licence IDs")
	copyright := flag.String("copyright", "packaging/debian/copyright", "wgperf's own Debian copyright file, which the written one starts with")
	tags := flag.String("tags", "", "the build tags of the build (go list -tags)")
	flag.Parse()
	if *out == "" || *sbom == "" || flag.NArg() == 0 {
		fail(errors.New("usage: licenses -sbom FILE.cdx.json -o DIR [-tags TAGS] [-copyright FILE] PACKAGES"))
	}
	if err := run(*out, *sbom, *copyright, *tags, flag.Args()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "licenses:", err)
	os.Exit(1)
}

func run(out, sbomPath, copyrightPath, tags string, pkgs []string) error {
	mods, err := linkedModules(tags, pkgs)
	if err != nil {
		return err
	}
	sb, err := os.ReadFile(sbomPath)
	if err != nil {
		return err
	}
	ids, err := SBOMLicenses(sb)
	if err != nil {
		return fmt.Errorf("%s: %w", sbomPath, err)
	}
	own, err := os.ReadFile(copyrightPath)
	if err != nil {
		return err
	}
	for i := range mods {
		m := &mods[i]
		if m.Files, err = LicenseFiles(m.Dir); err != nil {
			return err
		}
		if len(m.Files) == 0 {
			return fmt.Errorf("%s %s links into wgperf but has no licence file in %s", m.Path, m.Version, m.Dir)
		}
		key := m.Path + "@" + m.Version
		if m.Path == stdlib {
			key = stdlib
		}
		m.IDs = ids[key]
		if m.Path == stdlib && len(m.IDs) == 0 {
			// cyclonedx-gomod reads licences from the module cache, where
			// the standard library is not: Go's own is BSD-3-Clause
			// (GOROOT/LICENSE, whose text follows).
			m.IDs = []string{goLicense}
		}
		if len(m.IDs) == 0 {
			return fmt.Errorf("%s %s: the SBOM names no licence for it", m.Path, m.Version)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "THIRD_PARTY_LICENSES"), Notice(mods), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "copyright"), DebianCopyright(own, mods), 0o644)
}

// stdlib is the Go standard library's name in the SBOM and in Module.Path.
const stdlib = "std"

// goLicense is the Go standard library's licence.
const goLicense = "BSD-3-Clause"

// Module is one linked module and what it is licensed under.
type Module struct {
	Path, Version, Dir string
	IDs                []string // SPDX licence IDs, from the SBOM
	Files              []File   // its licence files
}

// File is one licence file of a module.
type File struct {
	Name string
	Text []byte
}

// linkedModules lists the modules the packages link on Linux (every
// architecture links the same ones), the main module left out, and the
// standard library from GOROOT, sorted by path.
func linkedModules(tags string, pkgs []string) ([]Module, error) {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=Module", "-tags=" + tags}, pkgs...)...)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOFLAGS=-mod=readonly", "GOPROXY=off")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	mods, err := ParseGoList(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	root, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(root))
	if len(f) != 2 {
		return nil, fmt.Errorf("go env GOROOT GOVERSION: %q", root)
	}
	return append([]Module{{Path: stdlib, Version: f[1], Dir: f[0]}}, mods...), nil
}

// ParseGoList reads go list -deps -json=Module output: the distinct
// non-main modules, each with the folder the go command reads it from (a
// replacement's when replaced), sorted by path.
func ParseGoList(r io.Reader) ([]Module, error) {
	type mod struct {
		Path, Version, Dir string
		Main               bool
		Replace            *mod
	}
	seen := map[string]Module{}
	dec := json.NewDecoder(r)
	for {
		var p struct{ Module *mod }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		m := p.Module
		if m == nil || m.Main {
			continue // the standard library's packages, and wgperf's own
		}
		dir := m.Dir
		if m.Replace != nil && m.Replace.Dir != "" {
			dir = m.Replace.Dir
		}
		if dir == "" {
			return nil, fmt.Errorf("%s %s is not in the module cache (go mod download)", m.Path, m.Version)
		}
		seen[m.Path] = Module{Path: m.Path, Version: m.Version, Dir: dir}
	}
	mods := make([]Module, 0, len(seen))
	for _, m := range seen {
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// licenseName is a licence file's name at a module's root, as Go's module
// proxy and pkg.go.dev look for them, and the NOTICE and PATENTS files that
// come with them (Apache-2.0 asks that NOTICE be passed on).
var licenseName = regexp.MustCompile(`(?i)^(LICEN[CS]E|COPYING|NOTICE|PATENTS|UNLICENSE)([-._].*)?$`)

// isLicense: a licence text, not a NOTICE or PATENTS file.
func isLicense(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "LICEN") || strings.HasPrefix(n, "COPYING")
}

// LicenseFiles reads the licence files at the root of a module's folder,
// sorted by name.
func LicenseFiles(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range entries {
		if !e.Type().IsRegular() || !licenseName.MatchString(e.Name()) || strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files = append(files, File{e.Name(), b})
	}
	return files, nil
}

// SBOMLicenses reads a CycloneDX JSON document's components: for each,
// keyed "path@version" (the standard library as "std"), its licence IDs
// (or expressions), sorted.
func SBOMLicenses(b []byte) (map[string][]string, error) {
	type component struct {
		Name, Version string
		Licenses      []struct {
			License    struct{ ID, Name string }
			Expression string
		}
	}
	var doc struct {
		BOMFormat  string
		Components []component
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.BOMFormat != "CycloneDX" {
		return nil, fmt.Errorf("not a CycloneDX document (bomFormat %q)", doc.BOMFormat)
	}
	ids := map[string][]string{}
	for _, c := range doc.Components {
		key := c.Name + "@" + c.Version
		if c.Name == stdlib {
			key = stdlib
		}
		var l []string
		for _, lic := range c.Licenses {
			for _, s := range []string{lic.License.ID, lic.License.Name, lic.Expression} {
				if s != "" {
					l = append(l, s)
					break
				}
			}
		}
		sort.Strings(l)
		ids[key] = l
	}
	return ids, nil
}

func name(m Module) string {
	if m.Path == stdlib {
		return "Go standard library (" + m.Version + ")"
	}
	return m.Path + " " + m.Version
}

// Notice is THIRD_PARTY_LICENSES: a list of the modules, then each module's
// licence files whole.
func Notice(mods []Module) []byte {
	var b bytes.Buffer
	b.WriteString("wgperf links the following Go modules and the Go standard library into its binary.\n" +
		"Their licences follow, each module's licence files in full.\n\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "  %s: %s\n", name(m), strings.Join(m.IDs, ", "))
	}
	for _, m := range mods {
		fmt.Fprintf(&b, "\n%s\n%s (%s)\n%s\n", strings.Repeat("=", 78), name(m), strings.Join(m.IDs, ", "), strings.Repeat("=", 78))
		for _, f := range m.Files {
			fmt.Fprintf(&b, "\n--- %s ---\n\n", f.Name)
			b.Write(bytes.TrimRight(f.Text, "\n"))
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// copyrightLine matches a copyright notice inside a licence text.
var copyrightLine = regexp.MustCompile(`(?im)^\s*(copyright\s+(?:\(c\)|©|\d{4}).*)$`)

// DebianCopyright is Debian's machine-readable copyright file: wgperf's
// own, then a Files paragraph per module (named by its module path), its
// copyright notices as the licence texts state them, and its licence IDs
// with the texts inline, so that each module's exact text is kept (two BSD
// texts differ in their holder). The Apache License 2.0 is the one text
// Debian ships itself: as Debian policy asks (12.5), a module under it
// points to /usr/share/common-licenses/Apache-2.0 instead (its NOTICE stays).
func DebianCopyright(own []byte, mods []Module) []byte {
	var b bytes.Buffer
	b.Write(bytes.TrimRight(own, "\n"))
	b.WriteString("\n")
	for _, m := range mods {
		var holders []string
		seen := map[string]bool{}
		for _, f := range m.Files {
			for _, c := range copyrightLine.FindAllStringSubmatch(string(f.Text), -1) {
				h := strings.Join(strings.Fields(c[1]), " ")
				// Apache-2.0's appendix holds a template, not a notice.
				if !seen[h] && !strings.Contains(h, "[yyyy]") && !strings.Contains(h, "{yyyy}") {
					seen[h] = true
					holders = append(holders, h)
				}
			}
		}
		if len(holders) == 0 {
			holders = []string{"the authors of " + name(m) + " (its licence names no holder)"}
		}
		files := "Files: " + m.Path + "/*"
		if m.Path == stdlib {
			files = "Files: go/src/*"
		}
		fmt.Fprintf(&b, "\n%s\nComment: %s, linked into /usr/bin/wgperf\nCopyright: %s\n", files, name(m), strings.Join(holders, "\n "))
		fmt.Fprintf(&b, "License: %s\n", strings.Join(m.IDs, " and "))
		apache := len(m.IDs) == 1 && m.IDs[0] == "Apache-2.0"
		for i, f := range m.Files {
			if i > 0 {
				b.WriteString(" .\n")
			}
			text := string(f.Text)
			if apache && isLicense(f.Name) {
				text = "On Debian systems, the full text of the Apache License, Version 2.0\n" +
					"can be found in /usr/share/common-licenses/Apache-2.0 (" + f.Name + ")."
			}
			for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
				if strings.TrimSpace(line) == "" {
					b.WriteString(" .\n")
				} else {
					b.WriteString(" " + strings.TrimRight(line, " \t\r") + "\n")
				}
			}
		}
	}
	return b.Bytes()
}
