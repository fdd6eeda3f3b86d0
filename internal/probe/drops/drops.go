// Package drops counts the packets the kernel drops, by the reason it gives
// (enum skb_drop_reason, Linux 5.17 and later) and the function that dropped
// them, per network namespace, while a measurement runs: the kernel's own
// answer to "where did the tunnel's packets die?", where counters only say
// that they did.
//
// A BPF program (cilium/ebpf, assembled here, no C compiler) on the
// skb:kfree_skb tracepoint adds each drop to a bounded map. It is attached in
// one of three tiers, chosen at run time and named in every output: "btf"
// (a tp_btf program; argument positions, struct offsets and reason names from
// the kernel's BTF), "tracepoint" (the classic tracepoint; record offsets and
// reason names from tracefs's format file, namespaces from BTF when there is
// one) and "none" (counters only, with the reason). Nothing about the
// tracepoint's layout or the reason values is taken from a table here: they
// moved between kernels (reason at offset 28 before 6.11, 36 after;
// NOT_SPECIFIED was 1, is 2).
//
// Local and netns targets share this process's one program, each seeing its
// own namespace; an ssh target runs "wgperf drops --serve" over the same
// connection when wgperf is installed there. Format, kallsyms and BTF layout
// parsing and the counting are pure and tested on recorded kernel files.
package drops

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Tiers of the sampler.
const (
	TierBTF        = "btf"        // tp_btf program, layout from BTF
	TierTracepoint = "tracepoint" // classic tracepoint, layout from tracefs
	TierNone       = "none"       // no sampler: counters only
)

// Status says how drops are sampled on one host, and over what.
type Status struct {
	Host string `json:"host"`
	Tier string `json:"tier"`
	// Why says why the tier is what it is: why there is no sampler, or why
	// a better tier was not used.
	Why string `json:"why,omitempty"`
	// Scope is what the counts cover: the namespace, the interfaces.
	Scope string `json:"scope,omitempty"`
}

// Line is the status in one line, e.g. "kernel drop reasons on netns:a: btf
// (network namespace 4026532291, every interface)".
func (s Status) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel drop reasons on %s: %s", s.Host, s.Tier)
	if s.Tier == TierNone {
		b.WriteString(", counters only")
	}
	if s.Scope != "" {
		fmt.Fprintf(&b, " (%s)", s.Scope)
	}
	if s.Why != "" {
		fmt.Fprintf(&b, ": %s", s.Why)
	}
	return b.String()
}

// Count is how many packets the kernel dropped for one reason in one
// function on one interface ("" when the packet had no device, e.g. at a
// socket).
type Count struct {
	Reason    string `json:"reason"`
	Function  string `json:"function,omitempty"`
	Interface string `json:"interface,omitempty"`
	Packets   uint64 `json:"packets"`
}

func (c Count) key() string { return c.Reason + "\x00" + c.Function + "\x00" + c.Interface }

// Snapshot is a host's drop counts since its sampler started.
type Snapshot struct {
	Counts []Count `json:"counts"`
	// Lost counts drops the sampler's map had no room for (bounded memory).
	Lost uint64 `json:"lost,omitempty"`
}

// Sampler counts one host's kernel drops. Snapshot and Close may be called
// from any goroutine; Close detaches and is safe to call twice.
type Sampler interface {
	Status() Status
	Snapshot(ctx context.Context) (Snapshot, error)
	Close() error
}

// Delta is what grew between two snapshots, most packets first.
func Delta(before, after Snapshot) []Count {
	prev := map[string]uint64{}
	for _, c := range before.Counts {
		prev[c.key()] += c.Packets
	}
	grown := map[string]Count{}
	for _, c := range after.Counts {
		g := grown[c.key()]
		g.Reason, g.Function, g.Interface = c.Reason, c.Function, c.Interface
		g.Packets += c.Packets
		grown[c.key()] = g
	}
	var out []Count
	for k, c := range grown {
		if c.Packets > prev[k] {
			c.Packets -= prev[k]
			out = append(out, c)
		}
	}
	Sort(out)
	return out
}

// Sort orders counts by packets, most first, then by name.
func Sort(cs []Count) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Packets != cs[j].Packets {
			return cs[i].Packets > cs[j].Packets
		}
		return cs[i].key() < cs[j].key()
	})
}

// ByReason sums counts per reason, most packets first.
func ByReason(cs []Count) []Count {
	sum := map[string]uint64{}
	fn := map[string]Count{}
	for _, c := range cs {
		sum[c.Reason] += c.Packets
		// The function and interface shown for a reason are its biggest one's.
		if best, ok := fn[c.Reason]; !ok || c.Packets > best.Packets {
			fn[c.Reason] = c
		}
	}
	var out []Count
	for r, n := range sum {
		c := fn[r]
		c.Packets = n
		out = append(out, c)
	}
	Sort(out)
	return out
}

// Noise are the reasons a healthy host drops for as a matter of course and
// that cost a tunnel nothing: a TCP connection closing, a socket torn down,
// a packet for another host on a shared segment.
var Noise = map[string]bool{
	"TCP_CLOSE":       true,
	"SOCKET_CLOSE":    true,
	"QUEUE_PURGE":     true,
	"OTHERHOST":       true,
	"UNIX_DISCONNECT": true,
}
