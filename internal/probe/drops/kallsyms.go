//go:build !router

package drops

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Symbols resolves kernel text addresses to function names, from
// /proc/kallsyms. A drop's location is an address inside the function that
// freed the packet.
type Symbols struct {
	addrs []uint64
	names []string
}

// maxSymbols bounds what ParseKallsyms keeps (6.18 has about 120,000 text symbols with its modules).
const maxSymbols = 1 << 20

// ParseKallsyms reads /proc/kallsyms, keeping text symbols ("t", "T"). Read
// without root, every address is 0 and nothing resolves.
func ParseKallsyms(r io.Reader) (*Symbols, error) {
	type sym struct {
		addr uint64
		name string
	}
	var syms []sym
	sc := bufio.NewScanner(r)
	for sc.Scan() && len(syms) < maxSymbols {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || (f[1] != "t" && f[1] != "T") {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || addr == 0 || !symbolName(f[2]) {
			continue
		}
		syms = append(syms, sym{addr, f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	s := &Symbols{}
	for _, x := range syms {
		s.addrs = append(s.addrs, x.addr)
		s.names = append(s.names, x.name)
	}
	return s, nil
}

// symbolName accepts what a kernel symbol is made of (a C identifier with
// the compiler's suffixes, ".cold", ".isra.0").
func symbolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Function names the function holding addr, "" when no symbol covers it.
func (s *Symbols) Function(addr uint64) string {
	if s == nil || addr == 0 {
		return ""
	}
	i := sort.Search(len(s.addrs), func(i int) bool { return s.addrs[i] > addr })
	if i == 0 {
		return ""
	}
	return s.names[i-1]
}
