package fleet

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxHosts bounds how many host names a whole inventory may give, its
// ranges expanded (a name given twice counts twice): ranges are someone
// else's text, and 40 lines of gN-[0:99999] must not eat the machine (one
// range of 100,000 names cost 342 MB and 4 s). The
// bound is checked while expanding, so no range expands past it.
const MaxHosts = 10_000

// maxRangeName bounds a host name that holds a range (a DNS name is at most
// 253 bytes), so the names a range expands to take at most MaxHosts times it.
const maxRangeName = 255

// errTooManyHosts is the one line an inventory past MaxHosts gets.
var errTooManyHosts = fmt.Errorf("the inventory names more than %d hosts (ranges expanded)", MaxHosts)

// rangeRE is Ansible's host range: [begin:end] or [begin:end:step], numbers
// (01 keeps its width) or single letters. An IPv6 address in brackets is not one.
var rangeRE = regexp.MustCompile(`\[([0-9]*|[a-zA-Z]):([0-9]+|[a-zA-Z])(?::([0-9]+))?\]`)

// expandRange expands every range in a host name, as Ansible does:
// web[01:03] is web01, web02, web03; db-[a:c] is db-a, db-b, db-c;
// n[0:10:5] is n0, n5, n10. Several ranges multiply. room is how many names
// the inventory may still give: past it, errTooManyHosts.
func expandRange(ctx context.Context, name string, room int) ([]string, error) {
	if room < 1 {
		return nil, errTooManyHosts
	}
	out := []string{name}
	if len(name) > maxRangeName && rangeRE.MatchString(name) {
		return nil, fmt.Errorf("a host name with a range is longer than %d bytes", maxRangeName)
	}
	for {
		loc := rangeRE.FindStringSubmatchIndex(out[0])
		if loc == nil {
			return out, nil
		}
		var next []string
		for _, n := range out {
			m := rangeRE.FindStringSubmatch(n)
			head, tail := n[:strings.Index(n, m[0])], n[strings.Index(n, m[0])+len(m[0]):]
			seq, err := rangeSeq(m[1], m[2], m[3], room-len(next))
			if err != nil {
				return nil, fmt.Errorf("range %s: %v", m[0], err)
			}
			for _, s := range seq {
				next = append(next, head+s+tail)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out = next
	}
}

// rangeSeq lists one range's values, at most room of them (more is
// errTooManyHosts, found before any is listed).
func rangeSeq(begin, end, step string, room int) ([]string, error) {
	st := 1
	if step != "" {
		var err error
		if st, err = strconv.Atoi(step); err != nil || st < 1 {
			return nil, fmt.Errorf("bad step %q", step)
		}
	}
	var out []string
	if isLetter(end) {
		if begin == "" || !isLetter(begin) || begin[0] > end[0] {
			return nil, fmt.Errorf("want letters, begin before end")
		}
		if (int(end[0])-int(begin[0]))/st+1 > room {
			return nil, errTooManyHosts
		}
		for c := int(begin[0]); c <= int(end[0]); c += st {
			out = append(out, string(rune(c)))
		}
		return out, nil
	}
	if begin == "" {
		begin = "0"
	}
	b, err1 := strconv.Atoi(begin)
	e, err2 := strconv.Atoi(end)
	if err1 != nil || err2 != nil || b > e {
		return nil, fmt.Errorf("want numbers, begin before end")
	}
	if (e-b)/st+1 > room {
		return nil, errTooManyHosts
	}
	width := 0
	if len(begin) > 1 && begin[0] == '0' {
		if len(begin) != len(end) {
			return nil, fmt.Errorf("a zero-padded range wants begin and end of one width")
		}
		width = len(begin)
	}
	for i := b; i <= e; i += st {
		out = append(out, fmt.Sprintf("%0*d", width, i))
	}
	return out, nil
}

func isLetter(s string) bool {
	return len(s) == 1 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}
