// Command sbom writes the software bill of materials of a wgperf release
// archive: a CycloneDX 1.5 JSON document listing the Go modules (and the Go
// standard library) the archive's wgperf binary was built from, as the Go
// toolchain recorded them in the binary. goreleaser runs it for every
// archive (.goreleaser.yaml, sboms):
//
//	sbom -version 1.2.3 -o wgperf_1.2.3_linux_arm64.tar.gz.cdx.json wgperf_1.2.3_linux_arm64.tar.gz
//
// The document depends only on the binary, so the same release gives the
// same bytes: its serial number is derived from the binary's module list.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime/debug"
	"strings"
)

func main() {
	out := flag.String("o", "", "the document to write")
	version := flag.String("version", "", "the release's version (the binary records (devel) for its own module)")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fail(errors.New("usage: sbom -o DOCUMENT ARCHIVE.tar.gz"))
	}
	bin, err := binaryOf(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		fail(fmt.Errorf("%s: %v", flag.Arg(0), err))
	}
	if *version != "" && info.Main.Version == "(devel)" {
		info.Main.Version = "v" + strings.TrimPrefix(*version, "v")
	}
	b, err := json.MarshalIndent(Document(info), "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sbom:", err)
	os.Exit(1)
}

// binaryOf returns the wgperf binary inside a release archive.
func binaryOf(archive string) ([]byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", archive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no wgperf binary", archive)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", archive, err)
		}
		if path.Base(h.Name) == "wgperf" && h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}

// Component is a CycloneDX component.
type Component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref"`
	Name       string     `json:"name"`
	Version    string     `json:"version"`
	PURL       string     `json:"purl"`
	Properties []Property `json:"properties,omitempty"`
}

// Property is a CycloneDX name/value pair.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BOM is the document.
type BOM struct {
	BOMFormat    string      `json:"bomFormat"`
	SpecVersion  string      `json:"specVersion"`
	SerialNumber string      `json:"serialNumber"`
	Version      int         `json:"version"`
	Metadata     Metadata    `json:"metadata"`
	Components   []Component `json:"components"`
}

// Metadata names what the BOM describes.
type Metadata struct {
	Component Component `json:"component"`
}

// Document is the BOM of one binary: the main module as its subject, every
// module it links (a replaced one as its replacement) and the standard
// library as components, build settings (GOOS, GOARCH, tags...) as properties.
func Document(info *buildinfo.BuildInfo) BOM {
	main := component("application", info.Main)
	for _, s := range info.Settings {
		main.Properties = append(main.Properties, Property{"cdx:gomod:build:" + s.Key, s.Value})
	}
	go1 := strings.TrimPrefix(info.GoVersion, "go")
	comps := []Component{{Type: "library", BOMRef: "pkg:golang/stdlib@v" + go1, Name: "stdlib", Version: "v" + go1, PURL: "pkg:golang/stdlib@v" + go1}}
	for _, d := range info.Deps {
		comps = append(comps, component("library", *d))
	}
	h := sha256.New()
	for _, c := range append([]Component{main}, comps...) {
		fmt.Fprintln(h, c.PURL)
	}
	sum := h.Sum(nil)
	sum[6] = sum[6]&0x0f | 0x50 // a name-based UUID (version 5 layout)
	sum[8] = sum[8]&0x3f | 0x80
	return BOM{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1,
		SerialNumber: fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]),
		Metadata:     Metadata{Component: main},
		Components:   comps,
	}
}

func component(kind string, m debug.Module) Component {
	if m.Replace != nil {
		m = *m.Replace
	}
	purl := "pkg:golang/" + m.Path + "@" + m.Version
	c := Component{Type: kind, BOMRef: purl, Name: m.Path, Version: m.Version, PURL: purl}
	if m.Sum != "" {
		c.Properties = []Property{{"cdx:gomod:module:sum", m.Sum}}
	}
	return c
}
