package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// This file is the tuning guide's load test: several clients, hundreds of
// connections in all, against one server through the tunnel at once (the
// guide measured a hub with 100 to 1,000 connections from several client
// machines; one iperf3 client opens at most 128 streams). --clients names
// the clients beside --client; each runs --parallel streams against an
// iperf3 server of its own on the server (--port, --port+1, ...).

// ClientRun is what one client carried in a many-clients run.
type ClientRun struct {
	Client  string `json:"client"`
	Port    int    `json:"port"` // its iperf3 server's port
	Streams int    `json:"streams"`
	// Mbit is the client's whole measured run; WindowMbit its rate in the
	// seconds every client measured at once (ClientsRun.OverlapSecs).
	Mbit        float64 `json:"mbit"`
	WindowMbit  float64 `json:"window_mbit"`
	Retransmits int64   `json:"retransmits"`
	Error       string  `json:"error,omitempty"`
}

// ClientsRun is one direction of the many-clients load: every client at
// once. The clients start together where the server shows its sockets
// (iperf.RunMany holds their servers until every client has connected);
// started free, one whose streams connected first loaded the path while
// the others still connected (2 to 3.5 s apart for 3 × 50 streams in the
// lab), and summing their runs counted a client that ran alone at the full
// rate (172 Mbit/s "through" a 100 Mbit/s link). Either way the aggregate
// is what the server's WireGuard interface received while every client's
// connections were open (clientscount.go); where its interface is unknown,
// the clients' shares of the seconds all measured at once, each run placed
// on one clock by when its process ended.
type ClientsRun struct {
	Direction   string `json:"direction"`
	Connections int    `json:"connections"` // streams of the clients that ran
	// Mbit is the aggregate over OverlapSecs: the server's interface's
	// figure while every connection was open (From "server"), or the
	// clients' shares of the seconds all measured at once (From
	// "clients"); 0 when neither lasted MinOverlap (Note says so).
	Mbit        float64 `json:"aggregate_mbit"`
	From        string  `json:"aggregate_from,omitempty"`
	OverlapSecs float64 `json:"overlap_secs"`
	// Together says the clients were started together (their servers held
	// until every client's streams were open); ClientsOverlapSecs is how
	// long every measured client measured at once by its own intervals.
	Together           bool        `json:"started_together"`
	ClientsOverlapSecs float64     `json:"clients_overlap_secs"`
	Note               string      `json:"note,omitempty"`
	Retransmits        int64       `json:"retransmits"`
	Clients            []ClientRun `json:"clients"`
	// Spread is the slowest client's run's rate over the fastest's (1: even);
	// 0 when fewer than two clients measured.
	Spread float64 `json:"spread,omitempty"`
}

// AggregateNote says where the aggregate comes from, or why there is none.
func (r ClientsRun) AggregateNote() string {
	switch r.From {
	case "server":
		return fmt.Sprintf("received by the server's WireGuard interface over the %.1f s all connections were open", r.OverlapSecs)
	case "clients":
		return fmt.Sprintf("the clients' shares of the %.1f s all measured at once (the server's interface unknown)", r.OverlapSecs)
	}
	return r.Note
}

// ManyClients is the load of several clients against one server.
type ManyClients struct {
	Addr     string       `json:"addr"` // the server's address every client connects to
	Clients  int          `json:"clients"`
	Streams  int          `json:"streams_per_client"`
	Omit     int          `json:"omit_secs"`
	Seconds  int          `json:"time_secs"`
	Runs     []ClientsRun `json:"runs"`
	Complete bool         `json:"complete"` // every client measured in every run
}

// clientTargets are the clients of the load: --client first, then --clients.
func (c Config) clientTargets() []target.Target {
	return append([]target.Target{c.Client}, c.Clients...)
}

// CheckClients says why the many-clients load cannot run as configured.
func (c Config) CheckClients() error {
	if len(c.Clients) == 0 {
		return nil
	}
	if c.Parallel > iperf.MaxStreams {
		return fmt.Errorf("--parallel %d: one iperf3 client opens at most %d streams; more connections take more --clients", c.Parallel, iperf.MaxStreams)
	}
	if len(c.Legs) > 0 {
		return errors.New("--clients measures the tunnel to one server: it does not go with --via")
	}
	seen := map[string]bool{}
	for _, t := range c.clientTargets() {
		if seen[t.String()] {
			return fmt.Errorf("client %s is named twice: each client is a host of its own", t)
		}
		seen[t.String()] = true
	}
	return nil
}

// MeasureClients runs the many-clients load through the tunnel: every
// client sends to the server at once (the server receives from all, as a
// hub from its clients), each with c.Parallel streams against its own
// iperf3 server. A client that fails is reported in its line; the others'
// figures stand. The server sending to every client is not measured: its
// interface's send counter includes what the path then drops.
func MeasureClients(ctx context.Context, c Config) (*ManyClients, error) {
	c.Normalize()
	if err := c.CheckClients(); err != nil {
		return nil, err
	}
	clients := c.clientTargets()
	for _, t := range append(slices.Clone(clients), c.Server) {
		if err := iperf.Check(ctx, t); err != nil {
			return nil, err
		}
	}
	if c.Port == 0 {
		c.Port = iperf.DefaultPort
	}
	m := &ManyClients{Addr: c.TunnelAddr, Clients: len(clients), Streams: c.Parallel, Omit: c.Omit, Seconds: c.Seconds}
	for _, dir := range []string{Upload} {
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "[clients] %d clients × %d streams %s (%ds)... ", len(clients), c.Parallel, dir, c.Omit+c.Seconds)
		}
		// Terse: a quick exit, which places each client's seconds
		// (Outcome.Ended): the server's output, 90 KB with 50 streams,
		// would cross the loaded tunnel first.
		test := iperf.Test{Addr: c.TunnelAddr, Port: c.Port, Seconds: c.Seconds, Omit: c.Omit, Reverse: dir == Download,
			Parallel: c.Parallel, Timeout: c.Timeout, Checked: true, Terse: true}
		var server <-chan []serverSample
		stop := func() {}
		if c.ServerInterface != "" {
			var sctx context.Context
			sctx, stop = context.WithCancel(ctx)
			ports := make([]int, len(clients))
			for i := range ports {
				ports[i] = c.Port + i
			}
			server = sampleServer(sctx, c.Server, c.ServerInterface, ports)
		}
		outs, err := iperf.RunMany(ctx, clients, c.Server, test)
		stop()
		var samples []serverSample
		if server != nil {
			samples = <-server
		}
		if err != nil {
			if c.Progress != nil {
				fmt.Fprintln(c.Progress, "failed")
			}
			return m, err
		}
		run := clientsRun(dir, clients, c.Port, c.Parallel, outs)
		if len(outs) > 0 && !outs[0].Released.IsZero() {
			// Held, every connection was open before any carried data.
			samples = slices.DeleteFunc(samples, func(s serverSample) bool { return s.at.Before(outs[0].Released) })
		}
		// Each client holds a control connection and its streams.
		if from, to, mbit, ok := allOpen(samples, len(clients)*(c.Parallel+1)); ok && run.Connections == len(clients)*c.Parallel {
			run.Mbit, run.From, run.OverlapSecs, run.Note = mbit, "server", to.Sub(from).Seconds(), ""
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "%.1f Mbit/s\n", run.Mbit)
		}
		m.Runs = append(m.Runs, run)
	}
	m.Complete = !slices.ContainsFunc(m.Runs, func(r ClientsRun) bool {
		return slices.ContainsFunc(r.Clients, func(c ClientRun) bool { return c.Error != "" })
	})
	return m, nil
}

// MinOverlap is the least time every client must have measured at once
// for an aggregate: iperf3 reports by the second.
const MinOverlap = time.Second

// clientsRun sums one direction's outcomes, client i's from outs[i], over
// the seconds all measured at once. It is pure.
func clientsRun(dir string, clients []target.Target, port, streams int, outs []iperf.Outcome) ClientsRun {
	run := ClientsRun{Direction: dir}
	from, to := overlap(outs)
	secs := to.Sub(from).Seconds()
	if secs >= MinOverlap.Seconds() {
		run.OverlapSecs = secs
	}
	run.ClientsOverlapSecs = max(secs, 0)
	run.Together = len(outs) > 0 && !outs[0].Released.IsZero()
	lo, hi := 0.0, 0.0
	for i, t := range clients {
		cr := ClientRun{Client: t.String(), Port: port + i, Streams: streams}
		o := outs[i]
		if o.Err != nil || o.Result == nil {
			cr.Error = "not measured"
			if o.Err != nil {
				cr.Error = o.Err.Error()
			}
			run.Clients = append(run.Clients, cr)
			continue
		}
		cr.Mbit, cr.Retransmits = o.Result.Mbit(), o.Result.Retransmits
		if o.Result.Streams > 0 {
			cr.Streams = o.Result.Streams
		}
		if run.OverlapSecs > 0 {
			cr.WindowMbit = rateWithin(o, from, to)
		}
		if run.OverlapSecs > 0 {
			run.Mbit, run.From = run.Mbit+cr.WindowMbit, "clients"
		}
		run.Retransmits += cr.Retransmits
		run.Connections += cr.Streams
		if lo == 0 || cr.Mbit < lo {
			lo = cr.Mbit
		}
		hi = max(hi, cr.Mbit)
		run.Clients = append(run.Clients, cr)
	}
	if measured := len(clients) - countErrors(run.Clients); measured > 1 && hi > 0 {
		run.Spread = lo / hi
	}
	if run.OverlapSecs == 0 && len(clients)-countErrors(run.Clients) > 0 {
		run.Note = fmt.Sprintf("the clients measured at once for %.1f s, under %s: no aggregate (their connections took turns to start; run longer with --time)",
			max(secs, 0), MinOverlap)
	}
	return run
}

// measuredSpan is when o's measured seconds ran by this machine's clock:
// they end when its process did (iperf3 exits right after its last interval),
// and started the measured phase's length before.
func measuredSpan(o iperf.Outcome) (from, to time.Time, ok bool) {
	if o.Err != nil || o.Result == nil {
		return time.Time{}, time.Time{}, false
	}
	ivs := o.Result.Measured()
	if len(ivs) == 0 {
		return time.Time{}, time.Time{}, false
	}
	length := time.Duration((ivs[len(ivs)-1].End - ivs[0].Start) * float64(time.Second))
	return o.Ended.Add(-length), o.Ended, true
}

// overlap is the span every measured client measured at once (to before
// from: none). It is pure.
func overlap(outs []iperf.Outcome) (from, to time.Time) {
	first := true
	for _, o := range outs {
		f, t, ok := measuredSpan(o)
		if !ok {
			continue
		}
		if first || f.After(from) {
			from = f
		}
		if first || t.Before(to) {
			to = t
		}
		first = false
	}
	return from, to
}

// rateWithin is o's rate in Mbit/s over [from, to]: each measured interval's
// rate weighted by the part of it inside the span, scaled so the whole
// phase comes to what the receiver got (the intervals are the sender's,
// which counts what is still queued: 988 against 808 Mbit/s in a recorded
// run with 50 streams).
func rateWithin(o iperf.Outcome, from, to time.Time) float64 {
	start, _, ok := measuredSpan(o)
	if !ok || !to.After(from) {
		return 0
	}
	ivs := o.Result.Measured()
	var in, all float64 // Mbit·s inside the span, and in the whole phase
	for _, iv := range ivs {
		a := start.Add(time.Duration((iv.Start - ivs[0].Start) * float64(time.Second)))
		b := start.Add(time.Duration((iv.End - ivs[0].Start) * float64(time.Second)))
		all += iv.Mbit * b.Sub(a).Seconds()
		a, b = later(a, from), earlier(b, to)
		if b.After(a) {
			in += iv.Mbit * b.Sub(a).Seconds()
		}
	}
	if all <= 0 {
		return 0
	}
	phase := ivs[len(ivs)-1].End - ivs[0].Start
	return in / to.Sub(from).Seconds() * (o.Result.Mbit() * phase / all)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func countErrors(cs []ClientRun) int {
	n := 0
	for _, c := range cs {
		if c.Error != "" {
			n++
		}
	}
	return n
}

// WriteText prints the load: per direction the aggregate, then each client.
func (m *ManyClients) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "\nSeveral clients at once: %d clients × %d streams to %s (%ds runs after %ds warm-up, each client against its own iperf3 server)\n",
		m.Clients, m.Streams, m.Addr, m.Seconds, m.Omit)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DIRECTION\tCLIENT\tPORT\tSTREAMS\tMBIT/S\tRETR\tNOTES")
	for _, r := range m.Runs {
		agg, note := "-", r.AggregateNote()
		if r.From != "" {
			agg = fmt.Sprintf("%.1f", r.Mbit)
		}
		fmt.Fprintf(tw, "%s\tall %d\t\t%d\t%s\t%d\t%s\n", r.Direction, len(r.Clients), r.Connections, agg, r.Retransmits, note)
		for i, c := range r.Clients {
			if c.Error != "" {
				fmt.Fprintf(tw, "\t%s\t%d\t%d\t-\t-\t%s\n", shell.Comment(c.Client), c.Port, c.Streams, shell.Comment(c.Error))
				continue
			}
			note := ""
			if i == 0 {
				note = "each client's own run"
				if r.Spread > 0 {
					note += fmt.Sprintf("; the slowest carried %.0f%% of the fastest", 100*r.Spread)
				}
			}
			fmt.Fprintf(tw, "\t%s\t%d\t%d\t%.1f\t%d\t%s\n", shell.Comment(c.Client), c.Port, c.Streams, c.Mbit, c.Retransmits, note)
		}
	}
	return tw.Flush()
}
