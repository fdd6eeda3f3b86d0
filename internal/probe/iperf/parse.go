// Package iperf runs iperf3 through Targets and reads its JSON output (-J).
//
// A test is one client run with --get-server-output, so a single JSON document
// holds both ends; the sender's side (the client uploading, the server in
// --reverse mode) is the one that knows retransmits and the congestion window.
package iperf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Result is one iperf3 test as seen from the sending side.
type Result struct {
	Version    string  `json:"version"`
	Protocol   string  `json:"protocol"` // "tcp" or "udp"
	Reverse    bool    `json:"reverse"`  // the server sent
	Streams    int     `json:"streams"`
	OmitSecs   int     `json:"omit_secs"`
	Seconds    float64 `json:"seconds"`              // measured duration after --omit
	Congestion string  `json:"congestion,omitempty"` // sender's TCP congestion control, e.g. "cubic"

	// SentMbit and ReceivedMbit are the whole-test rates (omitted seconds
	// excluded); SentBps and ReceivedBps the same in bits per second, as
	// iperf3's own JSON gives them (bits_per_second).
	SentMbit     float64 `json:"sent_mbit"`
	ReceivedMbit float64 `json:"received_mbit"`
	SentBps      float64 `json:"sent_bps"`
	ReceivedBps  float64 `json:"received_bps"`
	Retransmits  int64   `json:"retransmits"`

	// UDP only: what the receiver saw.
	LostPackets int64   `json:"lost_packets,omitempty"`
	Packets     int64   `json:"packets,omitempty"`
	LostPercent float64 `json:"lost_percent,omitempty"`
	JitterMs    float64 `json:"jitter_ms,omitempty"`

	// CPU use of the iperf3 processes, in percent of one CPU... as iperf3 reports it.
	SenderCPU   float64 `json:"sender_cpu_percent"`
	ReceiverCPU float64 `json:"receiver_cpu_percent"`

	// Intervals are the sender's per-interval figures, omitted ones included and flagged.
	Intervals []Interval `json:"intervals"`

	// PerStream are each stream's whole-test figures, in iperf3's order, when
	// the run had more than one TCP stream: how the streams shared the path.
	PerStream []StreamTotal `json:"per_stream,omitempty"`

	// Raw is the iperf3 -J document the result was read from (Run keeps it;
	// bench --iperf3-json writes it out), not part of wgperf's own JSON.
	Raw []byte `json:"-"`
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Intervals == nil {
		p.Intervals = []Interval{}
	}
	return json.Marshal(p)
}

// Interval is one reporting interval (one second by default) on the sending side.
type Interval struct {
	Start       float64 `json:"start"` // seconds since the (omit or measured) phase began
	End         float64 `json:"end"`
	Mbit        float64 `json:"mbit"` // all streams together
	Bps         float64 `json:"bps"`  // the same in bits per second
	Retransmits int64   `json:"retransmits"`
	// Cwnd is each TCP stream's congestion window in bytes at the interval's end.
	Cwnd    []int64 `json:"cwnd,omitempty"`
	RTTus   []int64 `json:"rtt_us,omitempty"`
	Omitted bool    `json:"omitted"`
}

// StreamTotal is one stream's whole test (iperf3's end.streams).
type StreamTotal struct {
	SentMbit     float64 `json:"sent_mbit"`
	ReceivedMbit float64 `json:"received_mbit"`
	Retransmits  int64   `json:"retransmits"`
}

// Mbit is what the stream carried: the receiver's figure, as Result.Mbit.
func (s StreamTotal) Mbit() float64 {
	if s.ReceivedMbit > 0 {
		return s.ReceivedMbit
	}
	return s.SentMbit
}

// Measured returns the intervals after --omit.
func (r *Result) Measured() []Interval {
	var out []Interval
	for _, iv := range r.Intervals {
		if !iv.Omitted {
			out = append(out, iv)
		}
	}
	return out
}

// Mbit is the rate the test achieved: the receiver's figure, which for TCP is
// what actually arrived and for UDP excludes lost datagrams.
func (r *Result) Mbit() float64 {
	if r.ReceivedMbit > 0 {
		return r.ReceivedMbit
	}
	return r.SentMbit
}

// Error is an iperf3 run that reported an error in its JSON ("error" field).
type Error struct{ Message string }

func (e *Error) Error() string { return "iperf3: " + e.Message }

// raw mirrors the parts of iperf3's JSON that wgperf reads.
type raw struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol   string `json:"protocol"`
			NumStreams int    `json:"num_streams"`
			Omit       int    `json:"omit"`
			Reverse    int    `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []rawInterval `json:"intervals"`
	End       struct {
		Sum         *rawSum `json:"sum"` // UDP
		SumSent     *rawSum `json:"sum_sent"`
		SumReceived *rawSum `json:"sum_received"`
		CPU         *rawCPU `json:"cpu_utilization_percent"`
		Streams     []struct {
			Sender   *rawSum `json:"sender"`
			Receiver *rawSum `json:"receiver"`
		} `json:"streams"`
		SenderCC   string `json:"sender_tcp_congestion"`
		ReceiverCC string `json:"receiver_tcp_congestion"`
	} `json:"end"`
	ServerOutput *raw   `json:"server_output_json"`
	Error        string `json:"error"`
}

type rawInterval struct {
	Streams []struct {
		Retransmits *int64 `json:"retransmits"`
		SndCwnd     *int64 `json:"snd_cwnd"`
		RTT         *int64 `json:"rtt"`
		Sender      bool   `json:"sender"`
	} `json:"streams"`
	Sum struct {
		Start         float64 `json:"start"`
		End           float64 `json:"end"`
		BitsPerSecond float64 `json:"bits_per_second"`
		Retransmits   int64   `json:"retransmits"`
		Omitted       bool    `json:"omitted"`
		Sender        *bool   `json:"sender"`
	} `json:"sum"`
}

type rawSum struct {
	Seconds       float64 `json:"seconds"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   int64   `json:"retransmits"`
	JitterMs      float64 `json:"jitter_ms"`
	LostPackets   int64   `json:"lost_packets"`
	Packets       int64   `json:"packets"`
	LostPercent   float64 `json:"lost_percent"`
}

type rawCPU struct {
	HostTotal   float64 `json:"host_total"`
	RemoteTotal float64 `json:"remote_total"`
}

// Parse reads the JSON an iperf3 client printed with -J (ideally with
// --get-server-output, so reverse runs carry the server's cwnd). An "error"
// in the document becomes an *Error.
func Parse(r io.Reader) (*Result, error) {
	var doc raw
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("iperf3 JSON: %w", err)
	}
	if doc.Error != "" {
		return nil, &Error{Message: strings.TrimPrefix(doc.Error, "error - ")}
	}
	ts := doc.Start.TestStart
	if ts.Protocol == "" {
		return nil, errors.New("iperf3 JSON: no test_start: not the output of an iperf3 client run")
	}
	res := &Result{
		Version:  doc.Start.Version,
		Protocol: strings.ToLower(ts.Protocol),
		Reverse:  ts.Reverse != 0,
		Streams:  ts.NumStreams,
		OmitSecs: ts.Omit,
	}
	// The sender's intervals: the client's unless reversed, then the server's.
	senderIntervals := doc.Intervals
	if res.Reverse && doc.ServerOutput != nil && len(doc.ServerOutput.Intervals) > 0 {
		senderIntervals = doc.ServerOutput.Intervals
	}
	for _, ri := range senderIntervals {
		iv := Interval{Start: ri.Sum.Start, End: ri.Sum.End, Mbit: ri.Sum.BitsPerSecond / 1e6, Bps: ri.Sum.BitsPerSecond,
			Retransmits: ri.Sum.Retransmits, Omitted: ri.Sum.Omitted}
		for _, s := range ri.Streams {
			if s.SndCwnd != nil {
				iv.Cwnd = append(iv.Cwnd, *s.SndCwnd)
			}
			if s.RTT != nil {
				iv.RTTus = append(iv.RTTus, *s.RTT)
			}
		}
		res.Intervals = append(res.Intervals, iv)
	}
	end := doc.End
	if end.SumSent != nil {
		res.SentMbit = end.SumSent.BitsPerSecond / 1e6
		res.Retransmits = end.SumSent.Retransmits
		res.Seconds = end.SumSent.Seconds
	}
	if end.SumReceived != nil {
		res.ReceivedMbit = end.SumReceived.BitsPerSecond / 1e6
	}
	if res.Protocol == "udp" {
		// Loss and jitter are the receiver's: sum_received, or "sum" in older versions.
		rx := end.SumReceived
		if rx == nil {
			rx = end.Sum
		}
		if rx != nil {
			res.LostPackets, res.Packets = rx.LostPackets, rx.Packets
			res.LostPercent, res.JitterMs = rx.LostPercent, rx.JitterMs
		}
		if res.SentMbit == 0 && end.Sum != nil {
			res.SentMbit, res.Seconds = end.Sum.BitsPerSecond/1e6, end.Sum.Seconds
		}
		if res.Packets > 0 {
			// iperf3's received rate counts bytes sent; take the lost datagrams out.
			res.ReceivedMbit = res.SentMbit * float64(res.Packets-res.LostPackets) / float64(res.Packets)
		}
	}
	if res.Protocol == "tcp" && len(end.Streams) > 1 {
		for _, st := range end.Streams {
			var t StreamTotal
			if st.Sender != nil {
				t.SentMbit, t.Retransmits = st.Sender.BitsPerSecond/1e6, st.Sender.Retransmits
			}
			if st.Receiver != nil {
				t.ReceivedMbit = st.Receiver.BitsPerSecond / 1e6
			}
			res.PerStream = append(res.PerStream, t)
		}
	}
	// iperf3's unit, for those who read its own JSON beside ours.
	res.SentBps, res.ReceivedBps = math.Round(res.SentMbit*1e6), math.Round(res.ReceivedMbit*1e6)
	res.Congestion = end.SenderCC
	if end.CPU != nil {
		// host_total is this client; remote_total the server.
		local, remote := end.CPU.HostTotal, end.CPU.RemoteTotal
		if res.Reverse {
			res.SenderCPU, res.ReceiverCPU = remote, local
		} else {
			res.SenderCPU, res.ReceiverCPU = local, remote
		}
	}
	return res, nil
}
