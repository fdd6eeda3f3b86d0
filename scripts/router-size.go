//go:build ignore

// router-size prints where the bytes of one or more unstripped Go binaries
// go, grouped by dependency (module, or standard library area; wgperf's own
// packages one by one): code (.text) and data (rodata, data, type
// descriptors) read from the symbol table, plus an estimated share of the
// pc-line tables and function metadata, which grow with the code and cannot
// be told apart per package. BSS (no bytes in the file) is not counted.
// Given several binaries, it prints one column each (e.g. before and after).
//
// Usage: go run scripts/router-size.go [-top N] BINARY...
// scripts/router-size.sh builds the binaries and calls this.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sizes is one binary's bytes per group.
type sizes struct {
	name     string
	group    map[string]uint64 // code + data per group, plus its metadata share
	code     map[string]uint64
	file     uint64 // the alloc sections: what a stripped binary holds, headers aside
	metadata uint64 // pclntab, funcdata and other bytes no symbol claims
}

func main() {
	top := flag.Int("top", 25, "groups to list (the rest is summed as \"other\")")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/router-size.go [-top N] BINARY...")
		os.Exit(2)
	}
	var all []sizes
	for _, p := range flag.Args() {
		s, err := measure(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "router-size:", err)
			os.Exit(1)
		}
		all = append(all, s)
	}
	print(all, *top)
}

func measure(path string) (sizes, error) {
	f, err := elf.Open(path)
	if err != nil {
		return sizes{}, err
	}
	defer f.Close()
	s := sizes{name: filepath.Base(path), group: map[string]uint64{}, code: map[string]uint64{}}
	type span struct{ lo, hi uint64 }
	var inFile []span
	var text span
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Type == elf.SHT_NOBITS {
			continue
		}
		s.file += sec.Size
		inFile = append(inFile, span{sec.Addr, sec.Addr + sec.Size})
		if sec.Name == ".text" {
			text = span{sec.Addr, sec.Addr + sec.Size}
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		return sizes{}, fmt.Errorf("%s: %v (build without -s -w)", path, err)
	}
	var claimed, codeTotal uint64
	for _, sym := range syms {
		if sym.Size == 0 || elf.ST_TYPE(sym.Info) == elf.STT_SECTION {
			continue
		}
		held := false
		for _, sp := range inFile {
			if sym.Value >= sp.lo && sym.Value < sp.hi {
				held = true
				break
			}
		}
		if !held {
			continue // bss
		}
		g := group(sym.Name)
		if g == "" {
			continue // metadata, counted below
		}
		s.group[g] += sym.Size
		claimed += sym.Size
		if sym.Value >= text.lo && sym.Value < text.hi {
			s.code[g] += sym.Size
			codeTotal += sym.Size
		}
	}
	s.metadata = s.file - claimed
	// The pc-line tables and function metadata follow the code: share them out by code size.
	if codeTotal > 0 {
		for g, c := range s.code {
			s.group[g] += uint64(float64(s.metadata) * float64(c) / float64(codeTotal))
		}
	}
	return s, nil
}

// group names the dependency a symbol belongs to, or "" for the runtime's
// tables that every function has a part of.
func group(name string) string {
	switch {
	case strings.HasPrefix(name, "go:func.") || name == "runtime.pclntab" || name == "runtime.findfunctab" ||
		strings.HasPrefix(name, "runtime.typelink") || strings.HasPrefix(name, "runtime.itablink") ||
		strings.HasPrefix(name, "go:buildinfo") || strings.HasPrefix(name, "runtime.funcnametab") ||
		strings.HasPrefix(name, "runtime.epclntab") || strings.HasPrefix(name, "runtime.firstmoduledata"):
		return ""
	case strings.HasPrefix(name, "go:string.") || strings.HasPrefix(name, "go:cuinfo"):
		return "(string literals)"
	}
	for _, p := range []string{"type:", "go:itab.", "go:link.", "gclocals·", "go:"} {
		name = strings.TrimPrefix(name, p)
	}
	name = strings.TrimLeft(name, "*[]")
	if i := strings.IndexAny(name, "[({ ,*"); i >= 0 {
		name = name[:i]
	}
	pkg := name
	slash := strings.LastIndexByte(pkg, '/')
	if i := strings.IndexByte(pkg[slash+1:], '.'); i >= 0 {
		pkg = pkg[:slash+1+i]
	}
	if pkg == "" || !strings.ContainsAny(pkg, "abcdefghijklmnopqrstuvwxyz") {
		return "(unnamed types)"
	}
	return area(pkg)
}

// area groups a package path: a module's packages together, wgperf's one by
// one, the standard library by its first path element (net/http and crypto
// apart).
func area(pkg string) string {
	if pkg == "main" {
		return "wgperf cmd/wgperf"
	}
	parts := strings.Split(pkg, "/")
	if !strings.Contains(parts[0], ".") {
		switch {
		case parts[0] == "vendor":
			return "std vendor/golang.org/x/* (http2, idna...)"
		case strings.HasPrefix(pkg, "net/http"):
			return "std net/http"
		case len(parts) > 1 && parts[0] == "internal" && parts[1] == "runtime":
			return "std runtime"
		}
		return "std " + parts[0]
	}
	if strings.HasPrefix(pkg, "github.com/wgperf/wgperf/") {
		if len(parts) > 4 {
			parts = parts[:5]
		}
		return "wgperf " + strings.Join(parts[3:], "/")
	}
	n := 2
	switch parts[0] {
	case "github.com", "golang.org", "go.yaml.in", "gopkg.in":
		n = 3
	}
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, "/")
}

func print(all []sizes, top int) {
	total := map[string]uint64{}
	for _, s := range all {
		for g, n := range s.group {
			if n > total[g] {
				total[g] = n
			}
		}
	}
	names := make([]string, 0, len(total))
	for g := range total {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool {
		if total[names[i]] != total[names[j]] {
			return total[names[i]] > total[names[j]]
		}
		return names[i] < names[j]
	})
	fmt.Printf("| %-44s |", "dependency (≈ bytes: code+data+metadata share)")
	for _, s := range all {
		fmt.Printf(" %14s |", s.name)
	}
	fmt.Printf("\n|%s|", strings.Repeat("-", 46))
	for range all {
		fmt.Printf("%s:|", strings.Repeat("-", 15))
	}
	fmt.Println()
	row := func(label string, val func(s sizes) uint64) {
		fmt.Printf("| %-44s |", label)
		for _, s := range all {
			fmt.Printf(" %14s |", kb(val(s)))
		}
		fmt.Println()
	}
	for i, g := range names {
		if i == top {
			rest := names[top:]
			row(fmt.Sprintf("other (%d groups)", len(rest)), func(s sizes) uint64 {
				var n uint64
				for _, g := range rest {
					n += s.group[g]
				}
				return n
			})
			break
		}
		row(g, func(s sizes) uint64 { return s.group[g] })
	}
	row("total in the file (stripped, headers aside)", func(s sizes) uint64 { return s.file })
	row("  of which pc-line tables, func metadata", func(s sizes) uint64 { return s.metadata })
}

func kb(n uint64) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f KB", float64(n)/1000)
}
