package parse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// tcQdisc is one "tc -j qdisc show" object. Rates are numbers of bytes per
// second; cake's bandwidth is the string "unlimited" when it shapes nothing.
type tcQdisc struct {
	Kind    string `json:"kind"`
	Dev     string `json:"dev"`
	Root    bool   `json:"root"`
	Options struct {
		Rate      any `json:"rate"`      // tbf
		Bandwidth any `json:"bandwidth"` // cake
	} `json:"options"`
}

// ParseTCQdisc parses "tc -j qdisc show" into the rate each device's root
// qdisc holds it to: tbf's rate, cake's bandwidth, and an htb root with no
// rate yet (its classes carry it: ParseTCClassHTB). A root qdisc that limits
// nothing (fq_codel, noqueue, cake unlimited) is left out.
func ParseTCQdisc(r io.Reader) (map[string]facts.Shaper, error) {
	var raw []tcQdisc
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("tc -j qdisc: %w", err)
	}
	out := map[string]facts.Shaper{}
	for _, q := range raw {
		if !q.Root || q.Dev == "" {
			continue
		}
		rate := q.Options.Rate
		switch q.Kind {
		case "cake":
			rate = q.Options.Bandwidth
			fallthrough
		case "tbf":
			if mbit, ok := bytesPerSecondMbit(rate); ok {
				out[q.Dev] = facts.Shaper{Qdisc: q.Kind, RateMbit: mbit}
			}
		case "htb":
			out[q.Dev] = facts.Shaper{Qdisc: q.Kind}
		}
	}
	return out, nil
}

// bytesPerSecondMbit reads a tc JSON rate (a number of bytes per second) as
// Mbit/s; anything else (cake's "unlimited", a zero) is no rate.
func bytesPerSecondMbit(v any) (float64, bool) {
	n, ok := v.(float64)
	if !ok || n <= 0 || math.IsInf(n, 0) || n > 1e13 {
		return 0, false
	}
	return n * 8 / 1e6, true
}

// ParseTCClassHTB reads "tc class show dev DEV" (text: this tc prints htb's
// classes the same with -j) for the root class with the largest ceil, the
// most the device's htb lets through: "class htb 1:1 root rate 450Mbit ceil
// 450Mbit burst 1518b cburst 1518b". ok is false when no root class has one.
func ParseTCClassHTB(r io.Reader) (sh facts.Shaper, ok bool, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] != "class" || f[1] != "htb" || f[3] != "root" {
			continue
		}
		for i := 4; i+1 < len(f); i++ {
			if f[i] != "ceil" {
				continue
			}
			v, good := tcRateMbit(f[i+1])
			if !good {
				return facts.Shaper{}, false, fmt.Errorf("tc class show: ceil %q", f[i+1])
			}
			if c := (facts.Shaper{Qdisc: "htb", RateMbit: v, Class: f[2]}); c.Valid() && v > sh.RateMbit {
				sh, ok = c, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return facts.Shaper{}, false, fmt.Errorf("tc class show: %w", err)
	}
	return sh, ok, nil
}

// tcRateMbit reads a rate as tc prints it ("450Mbit", "1Gbit", "800Kbit",
// "96bit") as Mbit/s.
func tcRateMbit(s string) (float64, bool) {
	for _, u := range []struct {
		suffix string
		mbit   float64
	}{{"Gbit", 1e3}, {"Mbit", 1}, {"Kbit", 1e-3}, {"bit", 1e-6}} {
		if num, found := strings.CutSuffix(s, u.suffix); found {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return 0, false
			}
			return v * u.mbit, true
		}
	}
	return 0, false
}
