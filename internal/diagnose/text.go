package diagnose

// The diagnosis and its renderers: text for people (with colour on a
// terminal) and JSON for programs (stable field names and finding IDs).

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// Host summarises one diagnosed host.
type Host struct {
	Host        target.Spec  `json:"host"` // target spec
	Hostname    string       `json:"hostname,omitempty"`
	Kernel      string       `json:"kernel,omitempty"`
	Distro      string       `json:"distro,omitempty"`
	CollectedAt time.Time    `json:"collected_at"`
	WireGuard   []string     `json:"wireguard"` // interface names
	Notes       []facts.Note `json:"notes,omitempty"`
}

// Diagnosis is the outcome of "wgperf diagnose": its JSON form is the
// command's --json output.
type Diagnosis struct {
	Findings []finding.Finding `json:"findings"`
	Skipped  []check.Skip      `json:"skipped"`
	Hosts    []Host            `json:"hosts"`
}

// NewDiagnosis assembles a diagnosis from the snapshots and what the checks found.
func NewDiagnosis(snaps []*facts.Snapshot, r check.Result) Diagnosis {
	d := Diagnosis{Findings: r.Findings, Skipped: r.Skipped, Hosts: []Host{}}
	if d.Findings == nil {
		d.Findings = []finding.Finding{}
	}
	if d.Skipped == nil {
		d.Skipped = []check.Skip{}
	}
	for _, s := range snaps {
		h := Host{Host: s.Host, Hostname: s.System.Hostname, Kernel: s.System.Kernel, Distro: s.System.Distro,
			CollectedAt: s.CollectedAt, WireGuard: []string{}, Notes: s.Notes}
		for _, w := range s.WireGuard {
			h.WireGuard = append(h.WireGuard, w.Name)
		}
		d.Hosts = append(d.Hosts, h)
	}
	return d
}

// Unknown says the diagnosis judged nothing: no host had a WireGuard
// interface, and nothing at or above a warning was found on them either. Its
// lack of findings does not mean all is well (exit 3, UNKNOWN).
func (d Diagnosis) Unknown() bool {
	for _, h := range d.Hosts {
		if len(h.WireGuard) > 0 {
			return false
		}
	}
	worst, any := finding.Worst(d.Findings)
	return !any || worst < finding.Warning
}

// AtLeast keeps the findings of severity min and above.
func (d Diagnosis) AtLeast(min finding.Severity) Diagnosis {
	kept := []finding.Finding{}
	for _, f := range d.Findings {
		if f.Severity >= min {
			kept = append(kept, f)
		}
	}
	d.Findings = kept
	return d
}

// WriteJSON writes d as indented JSON.
func WriteJSON(w io.Writer, d Diagnosis) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// TextOptions tune the human rendering.
type TextOptions struct {
	Color bool // ANSI colours, for a terminal
	Width int  // wrap prose at this column; 0 means 100
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// WriteText renders d for people: a summary line, then the findings grouped by
// severity (most severe first), each with its evidence and fixes, then the
// checks that could not run, and last where the findings are explained.
func WriteText(w io.Writer, d Diagnosis, o TextOptions) error {
	if err := writeBody(w, d, o); err != nil {
		return err
	}
	return writeHint(w, d, o)
}

// writeHint ends a diagnosis with findings by the command that explains
// them, naming the first (most severe) one.
func writeHint(w io.Writer, d Diagnosis, o TextOptions) error {
	if len(d.Findings) == 0 {
		return nil
	}
	p := &printer{w: w, o: o}
	first := d.Findings[0].ID
	more := ""
	for _, f := range d.Findings {
		if f.ID != first {
			more = " (or any ID above)"
			break
		}
	}
	p.line("")
	p.line(p.paint(ansiDim, "details: wgperf explain "+string(first)+more))
	return p.err
}

// writeBody is WriteText without the closing hint.
func writeBody(w io.Writer, d Diagnosis, o TextOptions) error {
	if o.Width <= 0 {
		o.Width = 100
	}
	p := &printer{w: w, o: o}
	p.summary(d)
	for _, sev := range []finding.Severity{finding.Critical, finding.Warning, finding.Info} {
		var group []finding.Finding
		for _, f := range d.Findings {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		p.line("")
		p.line(p.paint(severityColor(sev)+ansiBold, fmt.Sprintf("%s (%d)", strings.ToUpper(sev.String()), len(group))))
		for _, f := range group {
			p.finding(f)
		}
	}
	if len(d.Skipped) > 0 {
		p.line("")
		p.line(p.paint(ansiBold, fmt.Sprintf("SKIPPED (%d)", len(d.Skipped))))
		for _, s := range d.Skipped {
			p.line(fmt.Sprintf("  %s on %s: %s", s.Check, s.Host, s.Reason))
		}
	}
	// What could not be read, and what to install for it (a router's BusyBox
	// userland lacks tools a full Linux has).
	var notes []string
	for _, h := range d.Hosts {
		for _, n := range h.Notes {
			notes = append(notes, fmt.Sprintf("  %s: %s: %s", h.Host, n.Source, n.Message))
		}
	}
	if len(notes) > 0 {
		p.line("")
		p.line(p.paint(ansiBold, fmt.Sprintf("NOT COLLECTED (%d)", len(notes))))
		for _, n := range notes {
			p.line(n)
		}
	}
	return p.err
}

type printer struct {
	w   io.Writer
	o   TextOptions
	err error
}

func (p *printer) line(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s+"\n")
	}
}

func (p *printer) paint(code, s string) string {
	if !p.o.Color {
		return s
	}
	return code + s + ansiReset
}

func severityColor(s finding.Severity) string {
	switch s {
	case finding.Critical:
		return ansiRed
	case finding.Warning:
		return ansiYellow
	}
	return ansiCyan
}

func (p *printer) summary(d Diagnosis) {
	var hosts []string
	for _, h := range d.Hosts {
		desc := h.Host.String()
		var extra []string
		if h.Hostname != "" {
			extra = append(extra, h.Hostname)
		}
		if len(h.WireGuard) > 0 {
			extra = append(extra, strings.Join(h.WireGuard, ","))
		} else {
			extra = append(extra, "no WireGuard")
		}
		hosts = append(hosts, desc+" ("+strings.Join(extra, ", ")+")")
	}
	p.line(fmt.Sprintf("Diagnosed %s: %s", plural(len(d.Hosts), "host"), strings.Join(hosts, "; ")))
	counts := map[finding.Severity]int{}
	for _, f := range d.Findings {
		counts[f.Severity]++
	}
	if d.Unknown() {
		p.line("UNKNOWN: no WireGuard interface here, so nothing was judged.")
	}
	if len(d.Findings) == 0 && d.Unknown() {
		if s := skippedSuffix(d); s != "" {
			p.line(s[1:])
		}
		return
	}
	if len(d.Findings) == 0 {
		p.line("No findings: nothing here slows the tunnel down." + skippedSuffix(d))
		return
	}
	p.line(fmt.Sprintf("%s: %d critical, %d warning, %d info.%s", plural(len(d.Findings), "finding"),
		counts[finding.Critical], counts[finding.Warning], counts[finding.Info], skippedSuffix(d)))
}

func skippedSuffix(d Diagnosis) string {
	if len(d.Skipped) == 0 {
		return ""
	}
	return fmt.Sprintf(" %s skipped.", plural(len(d.Skipped), "check"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (p *printer) finding(f finding.Finding) {
	where := []string{f.Host.String()}
	if f.Interface != "" {
		where = append(where, f.Interface)
	}
	if f.Peer != "" {
		where = append(where, "peer "+finding.ShortKey(f.Peer))
	}
	p.line("")
	p.line("  " + p.paint(severityColor(f.Severity), "["+string(f.ID)+"]") + " " + p.paint(ansiDim, strings.Join(where, " ")))
	p.line("  " + p.paint(ansiBold, f.Title))
	for _, l := range wrap(f.Detail, p.o.Width-4) {
		p.line("    " + l)
	}
	if len(f.Evidence) > 0 {
		p.line("    Evidence:")
		for i, e := range f.Evidence {
			if i == finding.TextEvidence {
				p.line(fmt.Sprintf("      … and %d more (--json lists every one)", len(f.Evidence)-i))
				break
			}
			p.line("      " + e.String())
		}
	}
	for _, x := range f.Fixes {
		p.line("    Fix: " + x.Description)
		for _, c := range x.Commands {
			if strings.HasPrefix(c, "#") {
				p.line("      " + p.paint(ansiDim, c))
				continue
			}
			p.line("      " + p.paint(ansiDim, "$ ") + c)
		}
		for _, c := range x.Config {
			p.line("      persist in " + c.Path + ":")
			for _, l := range c.Lines {
				p.line("        " + strings.ReplaceAll(l, "\t", "  "))
			}
		}
		if x.Action != nil {
			p.line("      " + p.paint(ansiDim, "(wgperf fix can apply this: "+x.Action.Kind+")"))
		}
	}
}

// wrap breaks prose into lines of at most width columns at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len([]rune(word)) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
