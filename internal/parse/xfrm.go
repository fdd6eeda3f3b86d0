package parse

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// xfrmAlgo is an algorithm's name as ip prints it: "cbc(aes)",
// "rfc4106(gcm(aes))", "hmac(sha256)".
var xfrmAlgo = regexp.MustCompile(`^[a-z0-9_(),-]{1,64}$`)

// xfrmBlocks splits ip xfrm's output into blocks: a line at the margin and
// the indented lines under it, each as its fields.
func xfrmBlocks(r io.Reader, what string) ([][][]string, error) {
	var blocks [][][]string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			blocks = append(blocks, nil)
		}
		if len(blocks) > 0 {
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], f)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return blocks, nil
}

// after is the field that follows key in f, "" when key is not there.
func after(f []string, key string) string {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == key {
			return f[i+1]
		}
	}
	return ""
}

// xfrmAddr accepts an address or a prefix as ip prints them, "" otherwise.
func xfrmAddr(s string) string {
	if _, err := netip.ParsePrefix(s); err == nil {
		return s
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return s
	}
	return ""
}

// ParseXfrmPolicy reads "ip xfrm policy list": each policy's selector,
// direction, action and templates. Socket policies (per-socket bypasses an
// IKE daemon sets) select no packets of other sockets and are left out.
func ParseXfrmPolicy(r io.Reader) ([]facts.XfrmPolicy, error) {
	blocks, err := xfrmBlocks(r, "ip xfrm policy")
	if err != nil {
		return nil, err
	}
	out := []facts.XfrmPolicy{}
	for _, b := range blocks {
		sel := b[0]
		p := facts.XfrmPolicy{Src: xfrmAddr(after(sel, "src")), Dst: xfrmAddr(after(sel, "dst")), Proto: after(sel, "proto"), Templates: []facts.XfrmTemplate{}}
		if p.Src == "" || p.Dst == "" {
			continue
		}
		if p.Proto != "" && !xfrmAlgo.MatchString(p.Proto) {
			p.Proto = ""
		}
		p.DPort, _ = strconv.Atoi(after(sel, "dport"))
		for _, f := range b[1:] {
			switch f[0] {
			case "dir":
				if d := after(f, "dir"); d == "out" || d == "in" || d == "fwd" {
					p.Dir = d
				}
				if a := after(f, "action"); a == "block" || a == "allow" {
					p.Action = a
				}
				p.Priority, _ = strconv.ParseInt(after(f, "priority"), 10, 64)
			case "action":
				if a := after(f, "action"); a == "block" || a == "allow" {
					p.Action = a
				}
			case "tmpl":
				p.Templates = append(p.Templates, facts.XfrmTemplate{Src: xfrmAddr(after(f, "src")), Dst: xfrmAddr(after(f, "dst"))})
			case "proto":
				if n := len(p.Templates); n > 0 {
					t := &p.Templates[n-1]
					t.Proto, t.Mode = xfrmWord(after(f, "proto")), xfrmWord(after(f, "mode"))
				}
			}
		}
		if p.Dir != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseXfrmState reads "ip xfrm state list" (its keys cut on the host
// already; any left are never read): each security association's addresses,
// protocol, mode, algorithms and encapsulation.
func ParseXfrmState(r io.Reader) ([]facts.XfrmState, error) {
	blocks, err := xfrmBlocks(r, "ip xfrm state")
	if err != nil {
		return nil, err
	}
	out := []facts.XfrmState{}
	for _, b := range blocks {
		st := facts.XfrmState{Src: xfrmAddr(after(b[0], "src")), Dst: xfrmAddr(after(b[0], "dst"))}
		if st.Src == "" || st.Dst == "" {
			continue
		}
		for _, f := range b[1:] {
			switch f[0] {
			case "proto":
				st.Proto, st.Mode = xfrmWord(after(f, "proto")), xfrmWord(after(f, "mode"))
			case "enc":
				st.Enc = xfrmName(f)
			case "auth", "auth-trunc":
				st.Auth = xfrmName(f)
				if f[0] == "auth-trunc" {
					st.AuthBits = lastInt(f)
				}
			case "aead":
				st.AEAD, st.ICVBits = xfrmName(f), lastInt(f)
			case "encap":
				st.Encap = xfrmWord(after(f, "type"))
			}
		}
		if st.Proto != "" {
			out = append(out, st)
		}
	}
	return out, nil
}

// xfrmWord is a keyword ip prints ("esp", "tunnel", "espinudp"), "" when
// the text is something else.
func xfrmWord(s string) string {
	if xfrmAlgo.MatchString(s) && !strings.ContainsAny(s, "(),") {
		return s
	}
	return ""
}

// xfrmName is an algorithm line's name ("enc cbc(aes) 0x..." → "cbc(aes)").
func xfrmName(f []string) string {
	if len(f) > 1 && xfrmAlgo.MatchString(f[1]) {
		return f[1]
	}
	return ""
}

// lastInt is a line's last field as a number of bits (ICV or truncation), 0
// when it is none.
func lastInt(f []string) int {
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil || n <= 0 || n > 512 {
		return 0
	}
	return n
}
