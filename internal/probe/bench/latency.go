package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file holds the round trips a bench measures beside its runs: ping
// through the tunnel and over the underlay, idle and while each run loads
// the path, so a queue that fills under load shows and its place with it.

// RTT is one series of pings, in milliseconds as ping prints them.
type RTT struct {
	Sent     int     `json:"sent"`
	Received int     `json:"received"`
	MinMs    float64 `json:"min_ms"`
	MedianMs float64 `json:"median_ms"`
	P90Ms    float64 `json:"p90_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// Latency is the round trip to the server's tunnel and underlay addresses,
// pinged at the same time; a series that could not run says why in Errors.
type Latency struct {
	Tunnel   *RTT     `json:"tunnel,omitempty"`
	Underlay *RTT     `json:"underlay,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// String is a series as the bench prints it: "0.4/0.5/0.9/1.2 ms" (min,
// median, p90, max) and the loss, if any.
func (r *RTT) String() string {
	if r == nil {
		return "-"
	}
	if r.Received == 0 {
		return fmt.Sprintf("no reply to %d", r.Sent)
	}
	s := fmt.Sprintf("%s/%s/%s/%s ms", ms(r.MinMs), ms(r.MedianMs), ms(r.P90Ms), ms(r.MaxMs))
	if r.Received < r.Sent {
		s += fmt.Sprintf(" (%d of %d lost)", r.Sent-r.Received, r.Sent)
	}
	return s
}

// ms keeps two significant decimals below 10 ms and none above 100.
func ms(x float64) string {
	switch {
	case x < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

var (
	// "64 bytes from 10.77.0.2: icmp_seq=1 ttl=64 time=0.123 ms" (iputils),
	// "... seq=0 ttl=64 time=0.123 ms" (BusyBox).
	replyRE = regexp.MustCompile(`^\d+ bytes from .*\btime=([0-9.]+) ms`)
	// "10 packets transmitted, 9 received, 10% packet loss, time 1807ms"
	// (BusyBox: "9 packets received").
	sentRE = regexp.MustCompile(`^(\d+) packets transmitted, (\d+) (?:packets )?received`)
)

// ParsePing reads ping's output: every reply's time (duplicates and late
// replies left out) and the transmitted count of its summary. A series with
// no summary (ping killed) counts the replies it saw as sent.
func ParsePing(r io.Reader) (*RTT, error) {
	var times []float64
	sent := -1
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := replyRE.FindStringSubmatch(line); m != nil && !strings.Contains(line, "DUP!") {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil || math.IsInf(v, 0) || v < 0 {
				continue
			}
			times = append(times, v)
			continue
		}
		if m := sentRE.FindStringSubmatch(line); m != nil {
			sent, _ = strconv.Atoi(m[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if sent < 0 && len(times) == 0 {
		return nil, fmt.Errorf("no ping replies or summary in the output")
	}
	return summariseRTT(times, max(sent, len(times))), nil
}

// summariseRTT turns reply times into a series' figures: min, median, the
// 90th percentile (nearest rank) and max.
func summariseRTT(times []float64, sent int) *RTT {
	r := &RTT{Sent: sent, Received: len(times)}
	if len(times) == 0 {
		return r
	}
	s := append([]float64(nil), times...)
	sort.Float64s(s)
	n := len(s)
	r.MinMs, r.MaxMs = s[0], s[n-1]
	r.MedianMs = s[n/2]
	if n%2 == 0 {
		r.MedianMs = (s[n/2-1] + s[n/2]) / 2
	}
	r.P90Ms = s[int(math.Ceil(0.9*float64(n)))-1]
	return r
}
