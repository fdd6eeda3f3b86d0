package target

import (
	"strings"
	"testing"
)

// FuzzParse: whatever a spec says, ssh gets its options first, then "--",
// then a destination that cannot be an option, then one quoted command line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"local", "netns:a", "ssh:root@golem:2222", "ssh:[2001:db8::1]:22", "ssh:-oProxyCommand=x", "ssh:a@-b", "", "netns:site-a"} {
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
		// One parse, one kind: the Spec is the text it was given, its kind
		// claims that text, and the Target it opens is named by it.
		parsed, err := ParseSpec(spec)
		if err != nil || tg.String() != parsed.String() || (spec != "" && parsed.String() != spec) {
			t.Fatalf("ParseSpec(%q) = %v, %v; Parse opened %v", spec, parsed, err, tg)
		}
		if _, claimed := parsed.Kind().claim(parsed.String()); !claimed {
			t.Fatalf("%q parsed as kind %s, which does not claim it", spec, parsed.Kind().Name)
		}
		at, ok := tg.(*argvTarget)
		if _, isSSH := parsed.SSH(); !ok || !isSSH {
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
