package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/wgperf/wgperf/internal/cli"
)

// eachFlag calls fn with every flag of every command in a fresh tree, the
// root's persistent ones (--progress) once, on the root.
func eachFlag(fn func(c *cobra.Command, f *pflag.Flag)) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { fn(c, f) })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
}

// Help shows one default per flag: a usage that says its own default
// ("(default 10, 3 with --quick)") gets no second one from pflag.
func TestOneDefaultPerFlag(t *testing.T) {
	eachFlag(func(c *cobra.Command, f *pflag.Flag) {
		fs := pflag.NewFlagSet("", pflag.ContinueOnError)
		fs.AddFlag(f)
		if line := fs.FlagUsages(); strings.Count(line, "(default") > 1 {
			t.Errorf("%s --%s shows two defaults: %s", c.CommandPath(), f.Name, strings.TrimSpace(line))
		}
	})
}

// numeric are the value types that refuse words for being words.
var numeric = map[string]bool{"bool": true, "int": true, "int64": true, "uint": true, "uint16": true, "float64": true,
	"duration": true, "intSlice": true, "count": true}

// Every flag that takes one of a few words (its value refuses any other as
// it is parsed) completes exactly the words it takes.
func TestEveryEnumFlagCompletes(t *testing.T) {
	var found []string
	eachFlag(func(c *cobra.Command, f *pflag.Flag) {
		if numeric[f.Value.Type()] || f.Value.Set("zz-no-such-word") == nil {
			return // takes any word: a target, a path, an address
		}
		found = append(found, f.Name)
		path := strings.Fields(c.CommandPath())[1:]
		var out, errOut bytes.Buffer
		run(append(append([]string{"__complete"}, path...), "--"+f.Name, ""), &out, &errOut)
		got := strings.Split(strings.TrimSpace(out.String()), "\n")
		got = got[:len(got)-1] // the directive
		if len(got) == 0 {
			t.Errorf("%s --%s takes a few words and completes none", c.CommandPath(), f.Name)
		}
		for _, w := range got {
			if err := f.Value.Set(w); err != nil {
				t.Errorf("%s --%s completes %q, which it refuses: %v", c.CommandPath(), f.Name, w, err)
			}
		}
		if w, ok := f.Value.(cli.Words); ok && !slices.Equal(got, w.Words()) {
			t.Errorf("%s --%s completes %q, want %q", c.CommandPath(), f.Name, got, w.Words())
		}
	})
	want := []string{"progress", "severity", "log.level", "log.format"}
	if buildFlavor == "" { // the lab's
		want = append(want, "topology", "icmp-limit-style", "wireguard", "accel")
	}
	for _, name := range want {
		if !slices.Contains(found, name) {
			t.Errorf("--%s: not found as a flag of words (found %q)", name, found)
		}
	}
}

// Every visible --interface names a WireGuard interface of the command's
// host, and completes them (the lab's hidden node commands name TUN devices).
func TestInterfaceFlagsComplete(t *testing.T) {
	var seen []string
	eachFlag(func(c *cobra.Command, f *pflag.Flag) {
		if f.Name != "interface" && f.Name != "dev" || !cli.WireGuardInterfaceFlag(c, f) {
			return
		}
		seen = append(seen, c.CommandPath()+" --"+f.Name)
		if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
			t.Errorf("%s --%s completes nothing", c.CommandPath(), f.Name)
		}
	})
	for _, want := range []string{"wgperf fix ecmp --interface", "wgperf shape-sweep --interface"} {
		if !slices.Contains(seen, want) {
			t.Errorf("%s: not a WireGuard interface flag (found %q)", want, seen)
		}
	}
}

// The root help's examples start with the command a user with a slow tunnel
// runs first, and every example names a command the build has.
func TestRootExamplesLeadWithDoctor(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("--help: exit %d: %s", code, errOut.String())
	}
	_, ex, ok := strings.Cut(out.String(), "\nExamples:\n")
	ex, _, _ = strings.Cut(ex, "\n\n")
	lines := strings.Split(ex, "\n")
	if !ok || !strings.HasPrefix(lines[0], "  wgperf doctor --client local --server ssh:root@OTHER-END ") {
		t.Fatalf("root help's first example %q, want the doctor one-liner:\n%s", lines[0], out.String())
	}
	root := newRoot()
	for _, l := range lines {
		args := strings.Fields(l)[1:]
		if c, _, err := root.Find(args); err != nil || c == root {
			t.Errorf("example %q names no command of this build", l)
		}
	}
}
