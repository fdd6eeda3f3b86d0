//go:build !router

package drops

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Field is one field of a tracepoint's record, as tracefs's format file
// describes it.
type Field struct {
	Name   string
	Type   string
	Offset int
	Size   int
}

// Format is a tracepoint's format file (/sys/kernel/tracing/events/skb/kfree_skb/format):
// its record fields and, from its print fmt, the names its __print_symbolic
// gives to the reason field's values.
type Format struct {
	Name    string
	ID      int
	Fields  []Field
	Reasons map[uint32]string
}

// maxFormatBytes bounds what ParseFormat reads: the 6.18 kfree_skb file is
// about 5 KB, its reason table growing with every release.
const maxFormatBytes = 1 << 20

var (
	fieldRE  = regexp.MustCompile(`^\s*field:(.+?)\s*;\s*offset:(\d+);\s*size:(\d+);`)
	symbolRE = regexp.MustCompile(`\{\s*(\d+)\s*,\s*"([A-Za-z0-9_]{1,64})"\s*\}`)
)

// ParseFormat reads a tracefs format file.
func ParseFormat(r io.Reader) (*Format, error) {
	f := &Format{Reasons: map[uint32]string{}}
	sc := bufio.NewScanner(io.LimitReader(r, maxFormatBytes))
	sc.Buffer(make([]byte, 64<<10), maxFormatBytes)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "name:"):
			f.Name = strings.TrimSpace(strings.TrimPrefix(line, "name:"))
		case strings.HasPrefix(line, "ID:"):
			f.ID, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ID:")))
		case strings.HasPrefix(line, "print fmt:"):
			f.Reasons = reasonSymbols(line)
		default:
			m := fieldRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			decl := strings.TrimSpace(m[1])
			i := strings.LastIndexAny(decl, " *")
			if i < 0 {
				return nil, fmt.Errorf("tracepoint format: field %q has no type", decl)
			}
			off, _ := strconv.Atoi(m[2])
			size, _ := strconv.Atoi(m[3])
			f.Fields = append(f.Fields, Field{Name: decl[i+1:], Type: strings.TrimSpace(decl[:i+1]), Offset: off, Size: size})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tracepoint format: %v", err)
	}
	if len(f.Fields) == 0 {
		return nil, fmt.Errorf("tracepoint format: no fields")
	}
	return f, nil
}

// reasonSymbols reads the value names of __print_symbolic(REC->reason, ...)
// in a print fmt line; none when the tracepoint prints no reason.
func reasonSymbols(line string) map[uint32]string {
	out := map[uint32]string{}
	_, rest, ok := strings.Cut(line, "__print_symbolic(REC->reason")
	if !ok {
		return out
	}
	if i := strings.Index(rest, "__print_symbolic("); i >= 0 {
		rest = rest[:i] // another field's table
	}
	for _, m := range symbolRE.FindAllStringSubmatch(rest, -1) {
		v, err := strconv.ParseUint(m[1], 10, 32)
		if err == nil {
			out[uint32(v)] = m[2]
		}
	}
	return out
}

// Field returns the named field.
func (f *Format) Field(name string) (Field, bool) {
	for _, x := range f.Fields {
		if x.Name == name {
			return x, true
		}
	}
	return Field{}, false
}

// Record is where the classic tracepoint's record keeps what the sampler
// reads, in bytes from its start.
type Record struct {
	Skb, Location, Reason int
}

// RecordOf finds skbaddr, location and reason in a kfree_skb format. A
// kernel before 5.17 has no reason field: it says so.
func RecordOf(f *Format) (Record, error) {
	var rec Record
	for _, want := range []struct {
		name string
		size int
		at   *int
	}{{"skbaddr", 8, &rec.Skb}, {"location", 8, &rec.Location}, {"reason", 4, &rec.Reason}} {
		x, ok := f.Field(want.name)
		if !ok {
			if want.name == "reason" {
				return rec, fmt.Errorf("the kfree_skb tracepoint has no reason field (the kernel predates 5.17)")
			}
			return rec, fmt.Errorf("the kfree_skb tracepoint has no %s field", want.name)
		}
		if x.Size != want.size || x.Offset < 8 || x.Offset%want.size != 0 {
			return rec, fmt.Errorf("the kfree_skb tracepoint's %s field is %d bytes at offset %d, not what the sampler reads", want.name, x.Size, x.Offset)
		}
		*want.at = x.Offset
	}
	return rec, nil
}
