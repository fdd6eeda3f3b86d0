package roaming

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the endpoint samples' analysis. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.WGSharedKey}

// Turns is how often two endpoints must take turns for one key before it
// counts as shared: X → Y → X is already no device moving once, and one
// return could be a device moving back; two returns are not.
const Turns = 3

// Endpoints is the sequence of endpoints one key showed across the samples,
// each run of equal samples once, and the handshakes completed meanwhile.
type Endpoints struct {
	Key        string
	Sequence   []string
	Handshakes int // distinct latest handshakes seen after the first sample
	Samples    int
	Span       time.Duration
}

// Switches is how often the endpoint changed.
func (e Endpoints) Switches() int { return max(0, len(e.Sequence)-1) }

// Returns counts the switches back to the endpoint before the last one
// (X → Y → X counts one): a device that moves goes on, two devices alternate.
func (e Endpoints) Returns() int {
	n := 0
	for i := 2; i < len(e.Sequence); i++ {
		if e.Sequence[i] == e.Sequence[i-2] {
			n++
		}
	}
	return n
}

// Sequences reads each key's endpoint sequence from samples (oldest first).
// It is pure.
func Sequences(samples []Sample) map[string]Endpoints {
	out := map[string]Endpoints{}
	seen := map[string]map[time.Time]bool{}
	for i, s := range samples {
		for k, p := range s.Peers {
			e := out[k]
			e.Key = k
			e.Samples++
			if p.Endpoint != "" && (len(e.Sequence) == 0 || e.Sequence[len(e.Sequence)-1] != p.Endpoint) {
				e.Sequence = append(e.Sequence, p.Endpoint)
			}
			if seen[k] == nil {
				seen[k] = map[time.Time]bool{p.Handshake: true}
			} else if !p.Handshake.IsZero() && !seen[k][p.Handshake] {
				seen[k][p.Handshake] = true
				e.Handshakes++
			}
			if i > 0 {
				e.Span = s.At.Sub(samples[0].At)
			}
			out[k] = e
		}
	}
	return out
}

// Findings judges one watch: a key whose endpoint took turns between two or
// more addresses at least Turns times is held by two devices. It is pure.
func Findings(host target.Spec, iface string, samples []Sample) []finding.Finding {
	var out []finding.Finding
	seqs := Sequences(samples)
	for _, k := range slices.Sorted(maps.Keys(seqs)) {
		e := seqs[k]
		if e.Returns() < Turns-1 || e.Switches() < Turns {
			continue
		}
		addrs := distinct(e.Sequence)
		out = append(out, finding.Finding{
			ID: catalog.WGSharedKey, Severity: finding.Critical, Host: host, Interface: iface, Peer: k,
			Title: fmt.Sprintf("Two devices share one key: %s's peer %s answers from %s in turn", host, shell.Terminal(finding.ShortKey(k)), strings.Join(addrs, " and ")),
			Detail: "WireGuard sends a key's traffic to the address its last packet came from. Here that address switched " +
				strconv.Itoa(e.Switches()) + " times in " + e.Span.Round(time.Second).String() + ", back and forth between the same addresses: " +
				"two devices hold the same private key (a cloned VM, a config copied to a second device), each pulls the replies meant " +
				"for the other, and their handshakes replace each other's sessions.",
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "wg show " + iface + " endpoints, sampled every " + Every.String() + " during the bench (" + host.String() + ")",
					Key: "endpoint of " + shell.Terminal(finding.ShortKey(k)), Value: sequenceText(e.Sequence), Threshold: "one address, or one move"}.Of(float64(e.Switches()), finding.Count),
				finding.Evidence{Source: "wg show " + iface + " latest-handshakes (" + host.String() + ")", Key: "handshakes completed while sampled",
					Value: fmt.Sprintf("%d in %s", e.Handshakes, e.Span.Round(time.Second)), Threshold: "about one per 2 minutes (rekeying)"}.Of(float64(e.Handshakes), finding.Count),
			},
			Fixes: []finding.Fix{{
				Description: "Give one of the two devices a key of its own: on it, make a new key pair and put the private key in its " +
					"config; here, add the new public key as another peer with that device's own tunnel address (AllowedIPs)",
				Commands: []string{"wg genkey | tee private.key | wg pubkey", shell.Join("wg", "show", iface, "endpoints")},
			}},
		})
	}
	return out
}

func sequenceText(seq []string) string {
	const most = 8
	var s []string
	for i, e := range seq {
		if i == most {
			s = append(s, fmt.Sprintf("… (%d more)", len(seq)-most))
			break
		}
		s = append(s, shell.Terminal(e))
	}
	return strings.Join(s, " → ")
}

func distinct(seq []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range seq {
		if !seen[e] {
			seen[e] = true
			out = append(out, shell.Terminal(e))
		}
	}
	return out
}
