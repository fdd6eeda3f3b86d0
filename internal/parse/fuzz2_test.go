package parse

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzParseOSRelease(f *testing.F) {
	f.Add([]byte("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"))
	f.Add([]byte("DISTRIB_ID='OpenWrt'\nDISTRIB_DESCRIPTION='OpenWrt 23.05.2 r23630'\n"))
	f.Add([]byte("PRETTY_NAME=\"\\x1b]0;x\\a\"\n"))
	f.Add([]byte("PRETTY_NAME=\"Debian\\nfaked line\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseOSRelease(bytes.NewReader(b))
		if err == nil && strings.ContainsAny(v, "\n\r\x1b") {
			t.Fatalf("distro %q holds control characters", v)
		}
	})
}

func FuzzParseTC(f *testing.F) {
	addCorpus(f, "tc/*.json", "tc/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		shapers, _ := ParseTCQdisc(bytes.NewReader(b))
		for dev, s := range shapers {
			if dev == "" || s.RateMbit < 0 || (s.Qdisc != "htb" && s.RateMbit == 0) {
				t.Errorf("%q: %+v", dev, s)
			}
		}
		if sh, ok, _ := ParseTCClassHTB(bytes.NewReader(b)); ok && (sh.RateMbit <= 0 || sh.Class == "") {
			t.Errorf("htb %+v", sh)
		}
	})
}
