package iperf

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parseFile(t *testing.T, name string) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "iperf", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// The files were recorded with iperf 3.12 between two namespaces joined by a
// veth shaped to 200 Mbit/s with tbf (loss added with nft numgen where named).
func TestParseRecorded(t *testing.T) {
	tests := []struct {
		file         string
		protocol     string
		reverse      bool
		streams      int
		intervals    int // all, omitted included
		measured     int
		minMbit      float64
		maxMbit      float64
		retransmits  int64 // exact
		withCwnd     bool
		congestion   string
		lostPackets  int64
		lostPctAbove float64
	}{
		{file: "tcp-upload.json", protocol: "tcp", streams: 1, intervals: 4, measured: 3, minMbit: 180, maxMbit: 200, withCwnd: true, congestion: "bbr"},
		{file: "tcp-reverse.json", protocol: "tcp", reverse: true, streams: 1, intervals: 4, measured: 3, minMbit: 180, maxMbit: 200, withCwnd: true, congestion: "bbr"},
		{file: "tcp-parallel.json", protocol: "tcp", streams: 4, intervals: 4, measured: 3, minMbit: 180, maxMbit: 200, withCwnd: true, congestion: "bbr"},
		{file: "tcp-parallel-ceiling-cubic-upload.json", protocol: "tcp", streams: 4, intervals: 7, measured: 6, minMbit: 85, maxMbit: 100, retransmits: 153, withCwnd: true, congestion: "cubic"},
		{file: "tcp-parallel-ceiling-cubic-download.json", protocol: "tcp", reverse: true, streams: 4, intervals: 7, measured: 6, minMbit: 85, maxMbit: 100, retransmits: 237, congestion: "cubic"}, // the server ran without -J: its intervals came back as text,
		{file: "tcp-lossy-cubic.json", protocol: "tcp", streams: 1, intervals: 4, measured: 3, minMbit: 50, maxMbit: 70, retransmits: 312, withCwnd: true, congestion: "cubic"},
		{file: "tcp-reverse-lossy-cubic.json", protocol: "tcp", reverse: true, streams: 1, intervals: 6, measured: 5, minMbit: 180, maxMbit: 200, retransmits: 518, withCwnd: true, congestion: "cubic"},
		{file: "udp-50m.json", protocol: "udp", streams: 1, intervals: 3, measured: 3, minMbit: 49, maxMbit: 51},
		{file: "udp-20m-loss3.json", protocol: "udp", streams: 1, intervals: 3, measured: 3, minMbit: 18, maxMbit: 20, lostPackets: 157, lostPctAbove: 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := parseFile(t, tt.file)
			if r.Protocol != tt.protocol || r.Reverse != tt.reverse || r.Streams != tt.streams {
				t.Errorf("protocol/reverse/streams = %s/%v/%d, want %s/%v/%d", r.Protocol, r.Reverse, r.Streams, tt.protocol, tt.reverse, tt.streams)
			}
			if len(r.Intervals) != tt.intervals || len(r.Measured()) != tt.measured {
				t.Errorf("intervals %d (measured %d), want %d (%d)", len(r.Intervals), len(r.Measured()), tt.intervals, tt.measured)
			}
			if m := r.Mbit(); m < tt.minMbit || m > tt.maxMbit {
				t.Errorf("Mbit = %.1f, want %.0f..%.0f", m, tt.minMbit, tt.maxMbit)
			}
			if r.Retransmits != tt.retransmits {
				t.Errorf("retransmits = %d, want %d", r.Retransmits, tt.retransmits)
			}
			if r.Congestion != tt.congestion {
				t.Errorf("congestion = %q, want %q", r.Congestion, tt.congestion)
			}
			for _, iv := range r.Intervals {
				if tt.withCwnd && len(iv.Cwnd) != tt.streams {
					t.Errorf("interval %.0f-%.0f: %d cwnd values, want one per stream (%d)", iv.Start, iv.End, len(iv.Cwnd), tt.streams)
				}
				if !tt.withCwnd && len(iv.Cwnd) != 0 {
					t.Errorf("UDP interval has cwnd %v", iv.Cwnd)
				}
				if iv.Mbit <= 0 || iv.End <= iv.Start {
					t.Errorf("interval %+v: empty", iv)
				}
			}
			// Each of several TCP streams is kept whole, and they add up to the run.
			wantPer := 0
			if tt.protocol == "tcp" && tt.streams > 1 {
				wantPer = tt.streams
			}
			if len(r.PerStream) != wantPer {
				t.Errorf("%d per-stream totals, want %d", len(r.PerStream), wantPer)
			}
			var sent float64
			var retr int64
			for _, st := range r.PerStream {
				sent += st.SentMbit
				retr += st.Retransmits
			}
			if wantPer > 0 && (math.Abs(sent-r.SentMbit) > 0.01*r.SentMbit || retr != r.Retransmits) {
				t.Errorf("streams add up to %.2f Mbit/s, %d retransmits; the run %.2f, %d", sent, retr, r.SentMbit, r.Retransmits)
			}
			if r.LostPackets != tt.lostPackets || r.LostPercent < tt.lostPctAbove {
				t.Errorf("lost %d (%.2f%%), want %d (> %.1f%%)", r.LostPackets, r.LostPercent, tt.lostPackets, tt.lostPctAbove)
			}
		})
	}
}

// In reverse mode the cwnd is on the server: the parser must take the server's
// intervals, whose retransmits add up to the sender's total.
func TestParseReverseUsesServerIntervals(t *testing.T) {
	r := parseFile(t, "tcp-reverse-lossy-cubic.json")
	var sum int64
	for _, iv := range r.Intervals {
		if !iv.Omitted {
			sum += iv.Retransmits
		}
	}
	if sum != r.Retransmits {
		t.Errorf("measured intervals retransmit %d, total %d", sum, r.Retransmits)
	}
}

func TestParseErrors(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "iperf", "error-refused.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Parse(f)
	var ie *Error
	if !errors.As(err, &ie) || !strings.Contains(ie.Message, "Connection refused") {
		t.Errorf("refused run: err = %v, want *Error with Connection refused", err)
	}
	for _, in := range []string{"", "not json", `{"start":{}}`, `[1,2]`} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
}

func TestClientArgs(t *testing.T) {
	got := strings.Join(ClientArgs(Test{Addr: "10.77.0.2", Seconds: 3, Omit: 1, Reverse: true, Parallel: 4, MSS: 1360, Congestion: "cubic"}), " ")
	want := "-c 10.77.0.2 -p 5299 -J --get-server-output -t 3 --connect-timeout 8000 -O 1 -R -P 4 -M 1360 -C cubic"
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	got = strings.Join(ClientArgs(Test{Addr: "10.77.0.2", Port: 6000, Seconds: 2, UDPMbit: 20, CPort: 51820}), " ")
	want = "-c 10.77.0.2 -p 6000 -J --get-server-output -t 2 --connect-timeout 8000 -u -b 20M --cport 51820"
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	// An MSS step leaves out the server's JSON: -M does not clamp the
	// control connection that would carry it.
	got = strings.Join(ClientArgs(Test{Addr: "10.77.0.2", Seconds: 1, MSS: 1288, Terse: true}), " ")
	want = "-c 10.77.0.2 -p 5299 -J -t 1 --connect-timeout 8000 -M 1288"
	if got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
}

// Beside the Mbit figures, rates are in bits per second, iperf3's own unit:
// the whole test's as iperf3 summed them, each interval's as it reported it.
func TestParseKeepsBitsPerSecond(t *testing.T) {
	r := parseFile(t, "tcp-upload.json")
	var doc struct {
		Intervals []struct {
			Sum struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum"`
		} `json:"intervals"`
		End struct {
			SumSent struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_sent"`
		} `json:"end"`
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "probe", "iperf", "tcp-upload.json"))
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatal(err)
	}
	if r.SentBps != math.Round(doc.End.SumSent.BitsPerSecond) || r.ReceivedBps != math.Round(r.ReceivedMbit*1e6) || r.SentBps == 0 {
		t.Errorf("sent %v bps (iperf3: %v), received %v bps for %v Mbit/s", r.SentBps, doc.End.SumSent.BitsPerSecond, r.ReceivedBps, r.ReceivedMbit)
	}
	for i, iv := range r.Intervals {
		if iv.Bps != doc.Intervals[i].Sum.BitsPerSecond {
			t.Errorf("interval %d: %v bps, iperf3 said %v", i, iv.Bps, doc.Intervals[i].Sum.BitsPerSecond)
		}
	}
	out, _ := json.Marshal(r)
	for _, field := range []string{`"sent_bps":`, `"received_bps":`, `"bps":`} {
		if !strings.Contains(string(out), field) {
			t.Errorf("JSON lacks %s: %s", field, out)
		}
	}
}
