// Package finding is what every check and probe reports: a stable ID, a
// severity, the evidence that proves it and the fixes that remedy it.
package finding

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// ID is a finding's stable catalog ID, "area.name" ("mtu.pmtud-blackhole").
// Package check defines one constant per ID with its catalog entry.
type ID string

// JoinIDs lists IDs with sep between them.
func JoinIDs(ids []ID, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, sep)
}

// Severity orders findings; the zero value is Info.
type Severity int

const (
	Info     Severity = iota // worth knowing, nothing broken
	Warning                  // costs throughput or will, under load
	Critical                 // breaks throughput now
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	}
	return "info"
}

// ParseSeverity reads "info", "warning" or "critical".
func ParseSeverity(s string) (Severity, error) {
	for _, v := range []Severity{Info, Warning, Critical} {
		if v.String() == s {
			return v, nil
		}
	}
	return Info, fmt.Errorf("severity %q: want info, warning or critical", s)
}

func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

func (s *Severity) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	v, err := ParseSeverity(str)
	*s = v
	return err
}

// Evidence is one observation behind a finding. Value is for people; when it
// is a quantity, Number and Unit carry it for programs (Value "4194304 (4 MiB)"
// is Number 4194304, Unit Bytes), so nothing has to parse the display text.
type Evidence struct {
	Source    string `json:"source"`              // "/proc/net/snmp", "nft -j list ruleset", "iperf3"
	Key       string `json:"key"`                 // "Udp RcvbufErrors"
	Value     string `json:"value"`               // "9312"
	Threshold string `json:"threshold,omitempty"` // "0"
	// Number is the quantity Value leads with (a count, a size, a rate), in
	// Unit; it is meaningful, and in JSON present, only when Unit is set.
	Number float64 `json:"number"`
	Unit   Unit    `json:"unit,omitempty"`
}

// TextEvidence is how many of a finding's evidence items a text report
// prints; it counts the rest ("… and 990 more"), and JSON carries them all
// (a hub's 1,000 stale peers are one finding with one item each).
const TextEvidence = 10

// Unit names what an evidence's Number counts or measures.
type Unit string

// Units of Evidence.Number.
const (
	Bytes   Unit = "bytes"
	Packets Unit = "packets" // also datagrams, segments and pings
	Percent Unit = "percent" // 19.7 for 19.7%
	Ratio   Unit = "ratio"   // 0.85 for a tunnel at 85% of the underlay
	Mbits   Unit = "Mbit/s"
	Millis  Unit = "ms"
	Seconds Unit = "seconds"
	Count   Unit = "count" // events or entries: collapses, conntrack entries
	Flag    Unit = "flag"  // a 0/1 switch, such as net.ipv4.ip_forward
)

// Units lists every Unit, in the order above.
var Units = []Unit{Bytes, Packets, Percent, Ratio, Mbits, Millis, Seconds, Count, Flag}

// Of returns e with its value's quantity: n in unit u.
func (e Evidence) Of(n float64, u Unit) Evidence {
	e.Number, e.Unit = n, u
	return e
}

// MarshalJSON leaves "number" out of evidence that has no unit: a display
// value such as "none" or "eth1 via 192.0.2.1" has no quantity, not 0.
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	if e.Unit != "" {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		Source    string `json:"source"`
		Key       string `json:"key"`
		Value     string `json:"value"`
		Threshold string `json:"threshold,omitempty"`
	}{e.Source, e.Key, e.Value, e.Threshold})
}

// String is the evidence on one line: "source key = value (threshold: t)",
// without the parenthesis when there is no threshold.
func (e Evidence) String() string {
	s := e.Source + ": " + e.Key + " = " + e.Value
	if e.Threshold != "" {
		s += "  (threshold: " + e.Threshold + ")"
	}
	return s
}

// Fix is one remedy: a verb phrase, the exact commands for the runtime change,
// the persistent configuration, and a machine-readable Action for "wgperf fix".
type Fix struct {
	Description string          `json:"description"`
	Commands    []string        `json:"commands"`
	Config      []ConfigSnippet `json:"config,omitempty"`
	Action      *Action         `json:"action,omitempty"`
}

// ConfigSnippet is text to put in a file to make a fix survive a reboot.
type ConfigSnippet struct {
	Path  string   `json:"path"` // e.g. "/etc/sysctl.d/90-wgperf.conf", "/etc/wireguard/wg0.conf [Interface]"
	Lines []string `json:"lines"`
}

// Action names a change "wgperf fix" knows how to apply and roll back.
// Kinds and their params are defined by package remedy, each beside its
// constructor (remedy.KindSysctl: Params {"key": "net.core.rmem_max",
// "value": "26214400"}).
type Action struct {
	Kind   string            `json:"kind"`
	Params map[string]string `json:"params"`
}

// Finding is one diagnosed problem (or noteworthy fact) on a host.
type Finding struct {
	ID        ID          `json:"id"`
	Severity  Severity    `json:"severity"`
	Host      target.Spec `json:"host"` // the target spec; a document read back must hold a valid one
	Interface string      `json:"interface,omitempty"`
	Peer      string      `json:"peer,omitempty"`
	Title     string      `json:"title"`
	Detail    string      `json:"detail,omitempty"` // a sentence or two on why it matters
	Evidence  []Evidence  `json:"evidence"`
	Fixes     []Fix       `json:"fixes"`
}

// MarshalJSON writes a finding's lists as [] when they are empty, never null,
// so programs can range over them without a check.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	p := plain(f)
	if p.Evidence == nil {
		p.Evidence = []Evidence{}
	}
	if p.Fixes == nil {
		p.Fixes = []Fix{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes no commands as [], never null.
func (x Fix) MarshalJSON() ([]byte, error) {
	type plain Fix
	p := plain(x)
	if p.Commands == nil {
		p.Commands = []string{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes no lines as [], never null.
func (c ConfigSnippet) MarshalJSON() ([]byte, error) {
	type plain ConfigSnippet
	p := plain(c)
	if p.Lines == nil {
		p.Lines = []string{}
	}
	return json.Marshal(p)
}

// MarshalJSON writes no params as {}, never null.
func (a Action) MarshalJSON() ([]byte, error) {
	type plain Action
	p := plain(a)
	if p.Params == nil {
		p.Params = map[string]string{}
	}
	return json.Marshal(p)
}

// Sort orders findings most severe first, then by ID, host, interface and peer.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if ah, bh := a.Host.String(), b.Host.String(); ah != bh {
			return ah < bh
		}
		if a.Interface != b.Interface {
			return a.Interface < b.Interface
		}
		return a.Peer < b.Peer
	})
}

// Worst returns the highest severity among fs, and false when fs is empty.
func Worst(fs []Finding) (Severity, bool) {
	if len(fs) == 0 {
		return Info, false
	}
	w := Info
	for _, f := range fs {
		if f.Severity > w {
			w = f.Severity
		}
	}
	return w, true
}

// Merge folds findings about the same thing — same ID, host, interface and
// peer, as when a probe and a passive check both see UDP buffer drops — into
// one: the more severe (or, at equal severity, the first) keeps its title and
// detail, and the other's evidence and fixes are added where they are new.
// Order is that of each group's first finding.
func Merge(fs []Finding) []Finding {
	type key struct {
		id          ID
		host        target.Key
		iface, peer string
	}
	at := map[key]int{}
	var out []Finding
	for _, f := range fs {
		k := key{f.ID, f.Host.Key(), f.Interface, f.Peer}
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			f.Evidence = slices.Clone(f.Evidence)
			f.Fixes = slices.Clone(f.Fixes)
			out = append(out, f)
			continue
		}
		m := &out[i]
		if f.Severity > m.Severity {
			m.Severity, m.Title, m.Detail = f.Severity, f.Title, f.Detail
		}
		for _, e := range f.Evidence {
			if !slices.Contains(m.Evidence, e) {
				m.Evidence = append(m.Evidence, e)
			}
		}
		for _, x := range f.Fixes {
			if !slices.ContainsFunc(m.Fixes, func(y Fix) bool { return sameFix(x, y) }) {
				m.Fixes = append(m.Fixes, x)
			}
		}
	}
	return out
}

// sameFix reports whether two fixes run the same commands.
func sameFix(a, b Fix) bool {
	return slices.Equal(a.Commands, b.Commands) && reflect.DeepEqual(a.Action, b.Action)
}

// ShortKey is a WireGuard public key as findings and reports name it, the way
// people compare keys: its first 8 characters and an ellipsis.
func ShortKey(k string) string {
	if len(k) > 8 {
		return k[:8] + "…"
	}
	return k
}
