package target

import (
	"strings"
	"testing"
)

// FuzzParse: whatever a spec says, ssh gets its options first, then "--",
// then a destination that cannot be an option, then one quoted command line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"local", "netns:a", "ssh:root@golem:2222", "ssh:[2001:db8::1]:22", "ssh:-oProxyCommand=x", "ssh:a@-b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		tg, err := Parse(spec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		at, ok := tg.(*argvTarget)
		if !ok || !strings.HasPrefix(spec, "ssh:") {
			return
		}
		argv := at.wrap(nil, "true", nil)
		dash := -1
		for i, a := range argv {
			if a == "--" {
				dash = i
				break
			}
		}
		if dash < 0 || dash != len(argv)-3 {
			t.Fatalf("argv %q: want ... -- HOST COMMAND", argv)
		}
		for _, a := range argv[len(SSHCommand):dash] {
			if a != "-o" && a != "-p" && a != "-l" && strings.HasPrefix(a, "-") {
				t.Fatalf("argv %q: stray option %q", argv, a)
			}
		}
		if h := argv[dash+1]; strings.HasPrefix(h, "-") || h == "" {
			t.Fatalf("destination %q", h)
		}
	})
}
