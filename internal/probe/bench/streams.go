package bench

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// The streams of a parallel run share one path. Where it has a ceiling (a
// shaper, the link itself), the shaping case saw "a single naughty stream that
// kept hitting the link ceiling and causing TCP congestion collapse for that
// link", while the other three rode under it; and CUBIC streams at a
// drop-tail ceiling share it unevenly (recorded in the lab at 100 Mbit/s:
// 7.2, 40.1, 7.0 and 40.9 Mbit/s). The sum hides both, each stream's figures
// show them.

// naughtyShare is the share of a run's retransmits one stream must hold to
// be the one hitting the ceiling (an even split of four is 25% each).
const naughtyShare = 0.6

// minNaughtyRetransmits is the fewest retransmits that say which stream hits
// the ceiling: a handful lands on any stream by chance.
const minNaughtyRetransmits = 20

// starvedShare is the fraction of an even share below which a stream
// starved while the others took the path.
const starvedShare = 0.5

// StreamView says how a parallel TCP run's streams shared the path: each
// one's rate and retransmits, the stream that took most of the retransmits,
// if one did, and the streams that got under half an even share. "" for a
// run of one stream.
func StreamView(res *iperf.Result) string {
	if res == nil || len(res.PerStream) < 2 {
		return ""
	}
	n := len(res.PerStream)
	rates, retr := make([]string, n), make([]string, n)
	var total, most int64
	var sum float64
	worst := 0
	for i, st := range res.PerStream {
		rates[i], retr[i] = fmt.Sprintf("%.1f", st.Mbit()), fmt.Sprint(st.Retransmits)
		sum += st.Mbit()
		total += st.Retransmits
		if st.Retransmits > most {
			most, worst = st.Retransmits, i
		}
	}
	var said []string
	if total >= minNaughtyRetransmits && float64(most) >= naughtyShare*float64(total) {
		said = append(said, fmt.Sprintf("stream %d took %.0f%% of the retransmits, hitting the ceiling the others rode under", worst+1, 100*float64(most)/float64(total)))
	}
	even := sum / float64(n)
	starved := 0
	for _, st := range res.PerStream {
		if st.Mbit() < starvedShare*even {
			starved++
		}
	}
	if starved > 0 {
		said = append(said, fmt.Sprintf("%d of %d got under half an even share (%.1f Mbit/s each)", starved, n, even))
	}
	out := fmt.Sprintf("streams %s Mbit/s, retransmits %s", strings.Join(rates, ", "), strings.Join(retr, ", "))
	if len(said) > 0 {
		out += ": " + strings.Join(said, "; ")
	}
	return out
}
