package shell

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// hostile are the pieces attackers put in names, IDs and values.
var hostile = []string{"\n", "\r", "'", `"`, "$(", ")", "`", ";", "&", "|", "-", "#", "\\", " ", "\t",
	"\x1b[2J", "\x9b", "\xff", "\u202e", "\u2028", "touch /tmp/x", "a", "é", "\x00"}

func randomHostile(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(8) {
		b.WriteString(hostile[r.IntN(len(hostile))])
	}
	return b.String()
}

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		s := strings.ReplaceAll(randomHostile(r), "\x00", "") // argv cannot carry NUL
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Fatalf("sh printf %s = %q, %v; want %q", Quote(s), out, err, s)
		}
	}
	if got := Join("ip", "link", "set", "dev", "wg0", "mtu", "1420"); got != "ip link set dev wg0 mtu 1420" {
		t.Errorf("plain words quoted: %s", got)
	}
	if got := Join("echo", "", "it's"); got != `echo '' 'it'\''s'` {
		t.Errorf("Join = %s", got)
	}
}

// TestCommentStaysAComment is hole 2's core: whatever the text, a comment line
// built with Comment is one line and runs nothing.
func TestCommentStaysAComment(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []string{"udp.rcvbuf-errors\ntouch /tmp/x #", "a\rtouch x", "x\u2028touch y"}
	for range 200 {
		cases = append(cases, randomHostile(r))
	}
	var script strings.Builder
	for _, s := range cases {
		c := Comment(s)
		if strings.ContainsAny(c, "\n\r\x1b\x00") || !printable(c) {
			t.Fatalf("Comment(%q) = %q still holds control characters", s, c)
		}
		script.WriteString("# finding: " + c + "\n")
	}
	script.WriteString("echo done\n")
	out, err := exec.Command("sh", "-c", script.String()).CombinedOutput()
	if err != nil || string(out) != "done\n" {
		t.Fatalf("comment-only script ran something: %q, %v", out, err)
	}
	if got := Comment("udp.rcvbuf-errors\ntouch /tmp/x #"); got != `udp.rcvbuf-errors\ntouch /tmp/x #` {
		t.Errorf("Comment = %q", got)
	}
	if got := Comment("plain text, 20% (ok)"); got != "plain text, 20% (ok)" {
		t.Errorf("clean text changed: %q", got)
	}
}

func TestTerminalEscapesControlsKeepsLines(t *testing.T) {
	for in, want := range map[string]string{
		"eth0":              "eth0",
		"line1\n\tline2":    "line1\n\tline2",
		"\x1b]0;owned\x07x": `\x1b]0;owned\x07x`,
		"a\x9b2Jb":          `a\x9b2Jb`,
		"csi \u009b2J":      `csi \u009b2J`,
		"rtl \u202etxt.exe": `rtl \u202etxt.exe`,
		"cr\rhidden":        `cr\rhidden`,
		"café":              "café",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidators(t *testing.T) {
	type tc struct {
		f    func(string) error
		in   string
		good bool
	}
	for _, c := range []tc{
		{Iface, "wg0", true}, {Iface, "eth0.100", true}, {Iface, "veth1@if3", true},
		{Iface, "-x", false}, {Iface, "a b", false}, {Iface, "a/b", false}, {Iface, "averyveryverylong0", false}, {Iface, "", false},
		{Host, "golem", true}, {Host, "router.example.org", true}, {Host, "10.77.0.2", true}, {Host, "2001:db8::1", true},
		{Host, "fe80::1%eth0", true}, {Host, "my_alias", true},
		{Host, "-oProxyCommand=touch /tmp/x", false}, {Host, "-x", false}, {Host, "a;b", false}, {Host, "a b", false},
		{Host, "a\nb", false}, {Host, "1:2", false}, {Host, "fe80::1%-x", false}, {Host, "", false}, {Host, "$(id)", false},
		{User, "root", true}, {User, "svc.wg-perf", true}, {User, "ad@corp", true}, {User, "machine$", true},
		{User, "-oProxyCommand=x", false}, {User, "a b", false}, {User, "", false},
		{UCIKey, "network.wg0.mtu", true}, {UCIKey, "firewall.@defaults[0].flow_offloading", true},
		{UCIKey, "network.@interface[-1].mtu", true},
		{UCIKey, "network.wg0", false}, {UCIKey, "network.wg0.mtu;reboot", false}, {UCIKey, "-c.x.y", false}, {UCIKey, "a.b.c\n", false},
		{SysctlName, "net.core.rmem_max", true}, {SysctlName, "net.ipv4.conf.wg0.rp_filter", true},
		{SysctlName, "net", false}, {SysctlName, "net..core", false}, {SysctlName, "net.core/../../x", false}, {SysctlName, "-w.x", false},
		{SysctlValue, "4194304", true}, {SysctlValue, "4096\t131072\t6291456", true}, {SysctlValue, "bbr", true}, {SysctlValue, "-1", true},
		{FindingID, "udp.rcvbuf-errors", true}, {FindingID, "mtu.pmtud-blackhole", true},
		{FindingID, "udp.rcvbuf-errors\ntouch /tmp/x #", false}, {FindingID, "x", false}, {FindingID, "A.b", false},
		{func(s string) error { return Line("title", s) }, "Endpoint 46.38.233.77 is routed via br-lan.253", true},
		{func(s string) error { return Line("title", s) }, "a\nb", false},
		{SysctlValue, "1; reboot", false}, {SysctlValue, "1\n", false}, {SysctlValue, "", false}, {SysctlValue, "$(id)", false},
	} {
		err := c.f(c.in)
		if (err == nil) != c.good {
			t.Errorf("validate %q: err = %v, want ok=%v", c.in, err, c.good)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("error message carries raw control characters: %q", err)
		}
	}
}

// TestTerminalWriter: wgperf's own colours pass, foreign escape sequences do
// not, also when a write splits a sequence or a character.
func TestTerminalWriter(t *testing.T) {
	var b strings.Builder
	w := NewTerminalWriter(&b)
	for _, p := range []string{"\x1b[31mred\x1b[0m ", "eth0\x1b]0;pwned\x07 ", "\x1b[8mhidden\x1b", "[0m caf", "\xc3", "\xa9 \xc2", "\x9b2J\n", "\x1b"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[31mred\x1b[0m eth0\\x1b]0;pwned\\x07 \\x1b[8mhidden\x1b[0m café \\u009b2J\n\\x1b"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

// TestTerminalWriterKeepsJSON: a JSON document whose strings hold the
// controls encoding/json leaves raw (DEL, C1, bidi overrides) comes out of
// TerminalWriter with none of them raw, and decodes to the same values.
func TestTerminalWriterKeepsJSON(t *testing.T) {
	in := map[string]string{"host": "a\u007fb\u009b2J\u202ec\u0085d", "plain": "é\tx"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := NewTerminalWriter(&b)
	_, _ = w.Write(raw)
	_ = w.Flush()
	if !printable(strings.ReplaceAll(b.String(), "\t", "")) {
		t.Errorf("raw control characters in %q", b.String())
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(b.String()), &out); err != nil || out["host"] != in["host"] || out["plain"] != in["plain"] {
		t.Errorf("decoded %q, %v; want %q", out, err, in)
	}
}

// TestPrintfRoundTripsThroughSh: Printf's line prints the text exactly, in
// dash and in BusyBox sh, and holds no raw control character but newline and
// tab (so a printed script shows the same on every output).
func TestPrintfRoundTripsThroughSh(t *testing.T) {
	shells := [][]string{{"sh", "-c"}}
	if _, err := exec.LookPath("busybox"); err == nil {
		shells = append(shells, []string{"busybox", "sh", "-c"})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		s := randomHostile(r) + "%d%%s\\0101"
		line := Printf(s)
		if Terminal(line) != line {
			t.Fatalf("raw control characters in %q", line)
		}
		sh := shells[i%len(shells)]
		out, err := exec.Command(sh[0], append(sh[1:], line)...).Output()
		if err != nil || string(out) != s {
			t.Fatalf("%s %s = %q, %v; want %q", sh[0], line, out, err, s)
		}
	}
}
