//go:build linux && !router

package drops

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// MaxEntries bounds the count map: distinct (site, reason, namespace,
// device) keys, about 100 bytes each. A drop past it is counted as lost.
const MaxEntries = MaxCounts

// tracefsRoots are where tracefs is mounted, newest convention first.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// Kernel is the drop counter attached to this machine's kernel: one per
// process, shared by every local and netns view. Close detaches it; a
// process that dies detaches it too (nothing is pinned).
type Kernel struct {
	Tier  string
	Why   string // why not a better tier
	chase bool   // namespaces are told apart

	mu      sync.Mutex
	reasons map[uint32]string
	counts  *ebpf.Map
	lost    *ebpf.Map
	prog    *ebpf.Program
	link    link.Link
	symbols *Symbols
	closed  bool
}

// Open loads and attaches the drop counter, the best tier first. It fails
// with an error that says why there is none (not root, no BPF, a kernel
// without drop reasons), which is the "none" tier's line.
func Open() (*Kernel, error) { return OpenTier("") }

// OpenTier is Open limited to one tier ("" for the best there is).
func OpenTier(tier string) (*Kernel, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("not root: loading a BPF program needs root (CAP_BPF and CAP_PERFMON)")
	}
	_ = rlimit.RemoveMemlock() // kernels before 5.11 account BPF memory to RLIMIT_MEMLOCK
	var why []string
	var layout *BTFLayout
	spec, err := btf.LoadKernelSpec()
	if err == nil {
		layout, err = LayoutFromBTF(spec)
	}
	if err != nil {
		why = append(why, fmt.Sprintf("no BTF (%v)", err))
	}
	if tier == "" || tier == TierBTF {
		switch {
		case layout != nil && layout.Args != nil:
			k, err := load(TierBTF, argsSource(*layout.Args), layout.Chase, layout.Reasons)
			if err == nil {
				return k, nil
			}
			why = append(why, fmt.Sprintf("tp_btf: %v", err))
		case layout != nil:
			why = append(why, "BTF has no btf_trace_kfree_skb")
		}
		if tier == TierBTF {
			return nil, errors.New(joinWhy(why))
		}
	}
	format, err := readFormat()
	if err != nil {
		why = append(why, err.Error())
		return nil, errors.New(joinWhy(why))
	}
	rec, err := RecordOf(format)
	if err != nil {
		why = append(why, err.Error())
		return nil, errors.New(joinWhy(why))
	}
	var chase *Chase
	if layout != nil {
		chase = layout.Chase
	}
	k, err := load(TierTracepoint, recordSource(rec), chase, format.Reasons)
	if err != nil {
		why = append(why, fmt.Sprintf("tracepoint: %v", err))
		return nil, errors.New(joinWhy(why))
	}
	k.Why = joinWhy(why)
	return k, nil
}

func joinWhy(why []string) string {
	var b bytes.Buffer
	for i, w := range why {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(w)
	}
	return b.String()
}

// readFormat reads kfree_skb's format file from tracefs.
func readFormat() (*Format, error) {
	for _, root := range tracefsRoots {
		b, err := os.ReadFile(root + "/events/skb/kfree_skb/format")
		if err == nil {
			return ParseFormat(bytes.NewReader(b))
		}
	}
	return nil, errors.New("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing) or has no skb:kfree_skb")
}

func load(tier string, src source, chase *Chase, reasons map[uint32]string) (*Kernel, error) {
	k := &Kernel{Tier: tier, reasons: reasons, chase: chase != nil}
	var err error
	if k.counts, err = ebpf.NewMap(&ebpf.MapSpec{Name: "wgperf_drops", Type: ebpf.Hash, KeySize: 24, ValueSize: 8, MaxEntries: MaxEntries}); err != nil {
		return nil, fmt.Errorf("bpf map: %w", err)
	}
	if k.lost, err = ebpf.NewMap(&ebpf.MapSpec{Name: "wgperf_lost", Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}); err != nil {
		k.Close()
		return nil, fmt.Errorf("bpf map: %w", err)
	}
	spec := &ebpf.ProgramSpec{Name: "wgperf_drops", License: "GPL",
		Instructions: program(src, chase, k.counts.FD(), k.lost.FD())}
	if tier == TierBTF {
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, "kfree_skb"
	} else {
		spec.Type = ebpf.TracePoint
	}
	if k.prog, err = ebpf.NewProgram(spec); err != nil {
		k.Close()
		return nil, fmt.Errorf("loading the program: %w", err)
	}
	if tier == TierBTF {
		k.link, err = link.AttachTracing(link.TracingOptions{Program: k.prog, AttachType: ebpf.AttachTraceRawTp})
	} else {
		k.link, err = link.Tracepoint("skb", "kfree_skb", k.prog, nil)
	}
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("attaching to skb:kfree_skb: %w", err)
	}
	return k, nil
}

// Close detaches the program and frees its maps.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	var errs []error
	if k.link != nil {
		errs = append(errs, k.link.Close())
	}
	for _, c := range []interface{ Close() error }{k.prog, k.counts, k.lost} {
		if c != nil && !isNilCloser(c) {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

func isNilCloser(c interface{ Close() error }) bool {
	switch v := c.(type) {
	case *ebpf.Program:
		return v == nil
	case *ebpf.Map:
		return v == nil
	}
	return false
}

// raw is one drop site's count, as the map keeps it.
type raw struct {
	key
	packets uint64
}

// read copies the map.
func (k *Kernel) read() ([]raw, uint64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, 0, errors.New("the drop sampler is closed")
	}
	var out []raw
	var kk key
	var v uint64
	it := k.counts.Iterate()
	for it.Next(&kk, &v) {
		out = append(out, raw{kk, v})
	}
	if err := it.Err(); err != nil {
		return nil, 0, fmt.Errorf("reading the drop counts: %w", err)
	}
	var lost uint64
	_ = k.lost.Lookup(uint32(0), &lost)
	return out, lost, nil
}

// symbolsOnce loads /proc/kallsyms the first time a site is named.
func (k *Kernel) function(addr uint64) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.symbols == nil {
		k.symbols = &Symbols{}
		if f, err := os.Open("/proc/kallsyms"); err == nil {
			if s, err := ParseKallsyms(f); err == nil {
				k.symbols = s
			}
			f.Close()
		}
	}
	return k.symbols.Function(addr)
}

// ReasonName names a reason value as the running kernel does; a value it
// does not list (a subsystem's reason: its upper 16 bits) reads "reason 0x...".
func (k *Kernel) ReasonName(v uint32) string {
	if n, ok := k.reasons[v]; ok {
		return n
	}
	return fmt.Sprintf("reason %#x", v)
}
