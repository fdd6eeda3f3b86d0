package remedy

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// Step is a planned change with everything needed to undo it. Applying and
// reverting are the same for every kind — run the commands and write the
// files, or run the undo commands and put the old files back — because a
// Step's saved state is always plain shell lines plus previous file contents.
// That is also what lets a watchdog on a host without wgperf revert it.
type Step struct {
	Kind    string   `json:"kind"`
	Summary string   `json:"summary"`         // what changes, with the value seen now
	Done    bool     `json:"done,omitempty"`  // already in place: nothing to do
	Notes   []string `json:"notes,omitempty"` // e.g. what is not made persistent
	// Commands are shell lines run in order on the target after Files are written.
	Commands []string     `json:"commands,omitempty"`
	Files    []FileChange `json:"files,omitempty"`
	// Undo are shell lines that restore the runtime state; files are restored
	// from FileChange.Old afterwards.
	Undo []string `json:"undo,omitempty"`
}

// FileChange is one file written by a step, with its previous content.
type FileChange struct {
	Path    string `json:"path"` // as seen on the target (Root applied)
	Existed bool   `json:"existed"`
	Old     []byte `json:"old,omitempty"`
	New     []byte `json:"new"`
	Mode    uint32 `json:"mode"`
	// Edit, when set, are shell lines that make the same edit in place; the
	// printed script uses them instead of the whole file (which may hold keys).
	Edit []string `json:"edit,omitempty"`
}

// merge appends b to s: commands in order, undo in reverse order, and one
// FileChange per path (the first Old, the last New).
func (s *Step) merge(b Step) {
	s.Commands = append(s.Commands, b.Commands...)
	s.Undo = append(append([]string{}, b.Undo...), s.Undo...)
	for _, n := range b.Notes { // two halves of one step say a shared note once
		if !slices.Contains(s.Notes, n) {
			s.Notes = append(s.Notes, n)
		}
	}
	for _, f := range b.Files {
		merged := false
		for i := range s.Files {
			if s.Files[i].Path == f.Path {
				s.Files[i].New = f.New
				s.Files[i].Edit = append(s.Files[i].Edit, f.Edit...)
				merged = true
			}
		}
		if !merged {
			s.Files = append(s.Files, f)
		}
	}
}

// Heredoc is the shell that writes data to path exactly: a quoted
// here-document (shell.HereDoc) when the text allows it, printf otherwise. The
// lines it returns hold no raw control character but newline and tab
// (shell.Printf), as a printed script must not.
func Heredoc(path string, data []byte) string {
	s := string(data)
	if doc, err := shell.HereDoc("cat > "+shell.Join(path), s); err == nil {
		return doc
	}
	return shell.PrintfWord(s) + " > " + shell.Join(path)
}

// Dir is the folder of an absolute path ("/" for a top-level file).
func Dir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// splitLines splits text into lines without a trailing empty one.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
