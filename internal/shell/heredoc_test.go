package shell

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHereDocRefusesItsTerminator: a body that holds the terminator as a line
// of its own (first, in the middle, last), a raw control character, or no
// final newline is refused; a body that only mentions the terminator is not.
func TestHereDocRefusesItsTerminator(t *testing.T) {
	for _, body := range []string{
		HereEnd + "\ntouch /tmp/x\n",
		"table inet wgperf {\n\tcomment \"x\n" + HereEnd + "\ntouch /tmp/x\n\"\n}\n",
		"a\n" + HereEnd + "\n",
		"a\x1b[2J\n",
		"no newline",
	} {
		if doc, err := HereDoc("cat", body); err == nil {
			t.Errorf("HereDoc(%q) = %q, want a refusal", body, doc)
		}
	}
	for _, body := range []string{"a\n", "x " + HereEnd + "\n", HereEnd + " \n", "\t" + HereEnd + "\n", "a\n" + HereEnd + "x\n", "\n"} {
		doc, err := HereDoc("cat", body)
		if err != nil {
			t.Errorf("HereDoc(%q): %v", body, err)
			continue
		}
		if out, err := exec.Command("sh", "-c", doc).Output(); err != nil || string(out) != body {
			t.Errorf("sh %q = %q, %v; want %q", doc, out, err, body)
		}
	}
}

// TestStdinRunsNoLineOfItsBody: whatever the body (terminator lines, quotes,
// command lines, control characters), the line Stdin writes gives it to the
// command exactly and runs nothing else: a "touch" line in it never runs.
func TestStdinRunsNoLineOfItsBody(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	payload := "\n" + HereEnd + "\ntouch " + mark + "\ncat <<'" + HereEnd + "'\n"
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		body := strings.ReplaceAll(randomHostile(r)+payload+randomHostile(r), "\x00", "")
		if i%2 == 0 {
			body += "\n"
		}
		line := Stdin("cat", body)
		if Terminal(line) != line {
			t.Fatalf("raw control characters in %q", line)
		}
		out, err := exec.Command("sh", "-c", line).Output()
		if err != nil || string(out) != body {
			t.Fatalf("sh %q = %q, %v; want %q", line, out, err, body)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("sh %q ran a line of its body", line)
		}
	}
}

// TestEveryHereDocIsHereDocs: no Go file of the module but this package's
// writes a here-document of its own (a "<<'" in its text), so every one goes
// through HereDoc's refusal.
func TestEveryHereDocIsHereDocs(t *testing.T) {
	for _, top := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.Contains(string(data), "<<'") && filepath.Base(filepath.Dir(p)) != "shell" {
				t.Errorf("%s writes a here-document of its own: use shell.HereDoc or shell.Stdin", p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzStdin: whatever the body, Stdin's line is either one here-document
// whose only terminator line is its last, holding the body exactly, or a
// printf of one quoted word piped into the command; and it holds no raw
// control character but newline and tab.
func FuzzStdin(f *testing.F) {
	for _, s := range append(hostile, HereEnd+"\n", "a\n"+HereEnd+"\nb\n", "x\n") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		line := Stdin("cat", body)
		if Terminal(line) != line {
			t.Fatalf("Stdin(%q) = %q holds raw control characters", body, line)
		}
		if doc, ok := strings.CutPrefix(line, "cat <<'"+HereEnd+"'\n"); ok {
			got, ok := strings.CutSuffix(doc, HereEnd)
			if !ok || got != body {
				t.Fatalf("Stdin(%q) = %q: a document that does not hold the body", body, line)
			}
			if strings.HasPrefix(got, HereEnd+"\n") || strings.Contains(got, "\n"+HereEnd+"\n") {
				t.Fatalf("Stdin(%q) = %q ends its document early", body, line)
			}
			return
		}
		word, ok := strings.CutSuffix(line, " | cat")
		if !ok {
			t.Fatalf("Stdin(%q) = %q: neither a document nor a pipe", body, line)
		}
		arg, ok := strings.CutPrefix(word, "printf '%s' ")
		if !ok {
			arg, ok = strings.CutPrefix(word, "printf '%b' ")
		}
		if _, quoted := unquote(arg); !ok || !quoted {
			t.Fatalf("Stdin(%q) = %q: its printf argument is not one quoted word", body, line)
		}
	})
}
