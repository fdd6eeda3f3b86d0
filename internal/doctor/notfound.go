package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/udppath"
)

// Layer is one row of what a slow direction was measured at, outermost
// first: the underlay's TCP, UDP outside the tunnel, the tunnel's TCP.
type Layer struct {
	Name string
	Mbit float64
	// Of is what was offered, for a UDP row (0 for TCP).
	Of   float64
	Note string // "0.5% lost", "stalled"
}

func (l Layer) String() string {
	switch {
	case l.Note == "stalled":
		return l.Name + " stalled"
	case l.Of > 0:
		return fmt.Sprintf("%s %.1f of %.1f (%s)", l.Name, l.Mbit, l.Of, l.Note)
	}
	return fmt.Sprintf("%s %.1f", l.Name, l.Mbit)
}

// layers are the rows measured in dir in this run, from the bench's own
// runs, the UDP runs outside the tunnel and the long run's parallel one:
// whatever the report holds. It is pure.
func (r *Report) layers(dir string) []Layer {
	m := r.Measured
	d := m.Up
	if dir == bench.Download {
		d = m.Down
	}
	var out []Layer
	switch {
	case m.underlayFailed(dir):
		out = append(out, Layer{Name: "underlay TCP", Note: "stalled"})
	case d.Underlay > 0:
		out = append(out, Layer{Name: "underlay TCP", Mbit: d.Underlay})
	}
	for _, u := range ProbeResult[[]*udppath.Result](r, udppath.Def) {
		if u == nil || u.Direction != dir {
			continue
		}
		name := "UDP outside, another port"
		if u.WireGuardPort > 0 {
			name = fmt.Sprintf("UDP with WireGuard's port %d", u.WireGuardPort)
		}
		out = append(out, Layer{Name: name, Mbit: u.ArrivedMbit, Of: u.OfferedMbit, Note: fmt.Sprintf("%.1f%% lost", 100*u.PathLoss)})
	}
	if d.Tunnel > 0 || m.Stalled {
		l := Layer{Name: "tunnel TCP 1 stream", Mbit: d.Tunnel}
		if d.Tunnel <= 0 {
			l.Note = "stalled"
		}
		out = append(out, l)
	}
	many := 0.0
	streams := 0
	if r.Bench != nil {
		for _, run := range r.Bench.Runs {
			if run.Path == bench.PathTunnel && run.Direction == dir && run.Streams > 1 && run.UDPMbit == 0 && run.Result != nil {
				many, streams = run.Rate(), run.Streams
			}
		}
	}
	if lr := ProbeResult[*bench.LongRun](r, bench.LongRunDef); lr != nil && lr.Direction == dir && lr.Parallel != nil {
		many, streams = lr.Parallel.Stats.Mbit, lr.Parallel.Streams
	}
	if streams > 1 {
		out = append(out, Layer{Name: fmt.Sprintf("tunnel TCP %d streams", streams), Mbit: many})
	}
	return out
}

// fallsAt is the first row after the underlay's that carries less than the
// expected share of it: where the rate drops, "" when none does or the
// underlay was not measured.
func fallsAt(ls []Layer, expected float64) string {
	if len(ls) == 0 || ls[0].Note != "" || ls[0].Mbit <= 0 {
		return ""
	}
	for _, l := range ls[1:] {
		if l.Note == "stalled" || l.Mbit < expected*ls[0].Mbit {
			return l.Name
		}
	}
	return ""
}

// notFoundLines are the verdict of a slow tunnel no finding explains: the
// causes present that cannot explain it, each layer measured in each slow
// direction and where its rate falls, and what to measure next. It is pure.
func (r *Report) notFoundLines() []string {
	out := []string{"CAUSE NOT FOUND: no finding explains the shortfall measured (the status stays slow)."}
	for _, c := range r.Causes {
		if c.CannotExplain != "" {
			out = append(out, fmt.Sprintf("  %s on %s: %s", c.Finding.ID, c.Finding.Host, c.CannotExplain))
		}
	}
	m := r.Measured
	var next []string
	for _, dir := range []string{bench.Upload, bench.Download} {
		d := m.Up
		if dir == bench.Download {
			d = m.Down
		}
		if !m.underlayFailed(dir) && (d.Underlay <= 0 || d.Ratio() >= m.Expected) && !m.Stalled {
			continue
		}
		ls := r.layers(dir)
		var row []string
		for _, l := range ls {
			row = append(row, l.String())
		}
		out = append(out, fmt.Sprintf("  %s, layer by layer (Mbit/s): %s", dir, strings.Join(row, " → ")))
		if at := fallsAt(ls, m.Expected); at != "" {
			out = append(out, fmt.Sprintf("    the rate falls at: %s", at))
		}
		next = appendNew(next, tryNext(ls, m.Expected)...)
	}
	if len(next) > 0 {
		out = append(out, "  try next:")
		for _, n := range next {
			out = append(out, "    - "+n)
		}
	}
	return out
}

// tryNext says which layers a direction's rows lack or point at.
func tryNext(ls []Layer, expected float64) []string {
	has := func(prefix string) *Layer {
		for i := range ls {
			if strings.HasPrefix(ls[i].Name, prefix) {
				return &ls[i]
			}
		}
		return nil
	}
	var out []string
	if has("UDP outside") == nil {
		out = append(out, "UDP outside the tunnel at the underlay's rate (not measured in this run): a path that polices UDP shows there")
	}
	if has("UDP with WireGuard's port") == nil {
		out = append(out, "UDP with WireGuard's own port (not measured in this run): a path that throttles the port shows there")
	}
	one, many := has("tunnel TCP 1 stream"), lastMany(ls)
	switch {
	case one == nil:
	case many == nil:
		out = append(out, "several streams through the tunnel (wgperf doctor --thorough): one stream far below several is a per-flow limit")
	case many.Mbit > 1.5*one.Mbit:
		out = append(out, "one stream is held where several are not: its window, buffer or loss-based sender (ss -tin on the sender during a transfer)")
	}
	if u := has("UDP outside"); u != nil && one != nil && len(ls) > 0 && u.Mbit >= expected*ls[0].Mbit && one.Mbit < expected*ls[0].Mbit {
		out = append(out, "the tunnel's own packets: capture both ends during a transfer (sizes, fragments, packets per second) and the CPU per packet at each end")
	}
	return out
}

// lastMany is the several-streams row, nil without one.
func lastMany(ls []Layer) *Layer {
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.HasSuffix(ls[i].Name, "streams") {
			return &ls[i]
		}
	}
	return nil
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}
