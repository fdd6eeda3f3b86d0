package bench

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

// The streams of a parallel run share one path. Where it has a ceiling (a
// shaper, the link itself), the shaping case saw "a single naughty stream that
// kept hitting the link ceiling and causing TCP congestion collapse for that
// link", while the other three rode under it: the sum hides that, each
// stream's figures show it.

// naughtyShare is the share of a run's retransmits one stream must hold to
// be the one hitting the ceiling (an even split of four is 25% each).
const naughtyShare = 0.6

// minNaughtyRetransmits is the fewest retransmits that say which stream hits
// the ceiling: a handful lands on any stream by chance.
const minNaughtyRetransmits = 20

// StreamView says how a parallel TCP run's streams shared the path: each
// one's rate and retransmits, and the stream that took most of the
// retransmits, if one did. "" for a run of one stream.
func StreamView(res *iperf.Result) string {
	if res == nil || len(res.PerStream) < 2 {
		return ""
	}
	rates := make([]string, len(res.PerStream))
	retr := make([]string, len(res.PerStream))
	var total, most int64
	worst := 0
	for i, st := range res.PerStream {
		rate := st.ReceivedMbit
		if rate <= 0 {
			rate = st.SentMbit
		}
		rates[i] = fmt.Sprintf("%.1f", rate)
		retr[i] = fmt.Sprint(st.Retransmits)
		total += st.Retransmits
		if st.Retransmits > most {
			most, worst = st.Retransmits, i
		}
	}
	out := fmt.Sprintf("streams %s Mbit/s, retransmits %s", strings.Join(rates, ", "), strings.Join(retr, ", "))
	if total >= minNaughtyRetransmits && float64(most) >= naughtyShare*float64(total) {
		out += fmt.Sprintf(": stream %d took %.0f%% of them, hitting the ceiling the others rode under", worst+1, 100*float64(most)/float64(total))
	}
	return out
}
