//go:build !router

package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// ManItem is one tagged paragraph of a man page.
type ManItem struct{ Tag, Text string }

// ManSection is a section of tagged paragraphs.
type ManSection struct {
	Title string
	Items []ManItem
}

// ManPages is what WriteManPages adds to the pages cobra makes of the tree.
type ManPages struct {
	Source string // the program and its version
	// SeeAlso are the other tools' pages every page refers to, after the
	// program's own: "wg(8)".
	SeeAlso []string
	// Sections go on the root command's page, before SEE ALSO.
	Sections []ManSection
}

// WriteManPages writes ROOT.1 and ROOT-SUBCOMMAND.1 for every command of
// root into dir (created if missing), with m's additions.
func WriteManPages(root *cobra.Command, dir string, m ManPages) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Section: "1", Source: m.Source, Manual: root.Name() + " manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return err
	}
	// Every page's SEE ALSO goes on to the tools wgperf works beside.
	pages, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.1"))
	if err != nil {
		return err
	}
	var refs []string
	for _, r := range m.SeeAlso {
		name, section, _ := strings.Cut(strings.TrimSuffix(r, ")"), "(")
		refs = append(refs, fmt.Sprintf("\\fB%s\\fP(%s)", roffEscape(name), section))
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			return err
		}
		at := bytes.Index(b, []byte(".SH SEE ALSO\n"))
		if at < 0 {
			continue
		}
		end := bytes.IndexByte(b[at+len(".SH SEE ALSO\n"):], '\n')
		if end < 0 {
			continue
		}
		end += at + len(".SH SEE ALSO\n")
		out := append(append(append([]byte{}, b[:end]...), []byte(", "+strings.Join(refs, ", "))...), b[end:]...)
		if err := os.WriteFile(page, out, 0o644); err != nil {
			return err
		}
	}
	page := filepath.Join(dir, root.Name()+".1")
	b, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	var extra bytes.Buffer
	for _, s := range m.Sections {
		writeManSection(&extra, s)
	}
	at := bytes.Index(b, []byte(".SH SEE ALSO"))
	if at < 0 {
		at = len(b)
	}
	out := append(append(append([]byte{}, b[:at]...), extra.Bytes()...), b[at:]...)
	return os.WriteFile(page, out, 0o644)
}

// writeManSection writes a roff section of tagged paragraphs.
func writeManSection(b *bytes.Buffer, s ManSection) {
	fmt.Fprintf(b, ".SH %s\n", s.Title)
	for _, it := range s.Items {
		fmt.Fprintf(b, ".TP\n\\fB%s\\fP\n%s\n", roffEscape(it.Tag), roffEscape(it.Text))
	}
	b.WriteString("\n")
}

// roffEscape keeps text literal in roff: backslashes, a leading dot or quote
// (a request), and hyphens (minus signs, for copying commands and paths).
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
