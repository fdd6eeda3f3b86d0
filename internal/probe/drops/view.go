//go:build linux && !router

package drops

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// shared is this process's one Kernel, opened by the first local view and
// closed with the last.
var shared struct {
	sync.Mutex
	k     *Kernel
	err   error
	users int
}

func acquire() (*Kernel, error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.users == 0 {
		shared.k, shared.err = Open()
	}
	if shared.err != nil {
		return nil, shared.err
	}
	shared.users++
	return shared.k, nil
}

func release() {
	shared.Lock()
	defer shared.Unlock()
	if shared.users == 0 {
		return
	}
	shared.users--
	if shared.users == 0 && shared.k != nil {
		shared.k.Close()
		shared.k = nil
	}
}

// Local is a Sampler of this machine's kernel seen from one network
// namespace (the local host's, or a netns target's).
type Local struct {
	k      *Kernel
	t      target.Target
	netns  uint32 // 0: every namespace (the kernel's BTF could not tell them apart)
	status Status

	mu     sync.Mutex
	names  map[uint32]string // ifindex → interface name in the namespace
	closed bool
	shared bool // holds the process's shared kernel counter
}

// OpenLocal samples t, a local or netns target, through this process's
// kernel drop counter.
func OpenLocal(ctx context.Context, t target.Target) (Sampler, error) {
	k, err := acquire()
	if err != nil {
		return nil, err
	}
	v, err := view(ctx, k, t)
	if err != nil {
		release()
		return nil, err
	}
	v.shared = true
	return v, nil
}

// view is t's view of k.
func view(ctx context.Context, k *Kernel, t target.Target) (*Local, error) {
	v := &Local{k: k, t: t, status: Status{Host: t.String(), Tier: k.Tier, Why: k.Why}}
	if k.chase {
		inode, err := namespaceOf(ctx, t)
		if err != nil {
			return nil, err
		}
		v.netns = inode
		v.status.Scope = fmt.Sprintf("network namespace %d, every interface; a drop without a device counts in its socket's namespace", inode)
	} else {
		v.status.Scope = "every network namespace of this machine together (the kernel's BTF does not say where a packet's namespace is)"
	}
	return v, nil
}

// namespaceOf reads the inode of t's network namespace ("net:[4026531840]").
func namespaceOf(ctx context.Context, t target.Target) (uint32, error) {
	out, err := t.Run(ctx, "readlink", "/proc/self/ns/net")
	if err != nil {
		return 0, fmt.Errorf("finding the network namespace: %w", err)
	}
	return ParseNamespaceLink(string(out))
}

// ParseNamespaceLink reads "net:[4026531840]", the target of /proc/PID/ns/net.
func ParseNamespaceLink(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	inner, ok := strings.CutPrefix(s, "net:[")
	if inner, ok2 := strings.CutSuffix(inner, "]"); ok && ok2 {
		if n, err := strconv.ParseUint(inner, 10, 32); err == nil && n > 0 {
			return uint32(n), nil
		}
	}
	return 0, fmt.Errorf("finding the network namespace: %q is not a namespace link", s)
}

func (v *Local) Status() Status { return v.status }

// Snapshot names the counts of v's namespace.
func (v *Local) Snapshot(ctx context.Context) (Snapshot, error) {
	raws, lost, err := v.k.read()
	if err != nil {
		return Snapshot{}, err
	}
	var s Snapshot
	s.Lost = lost
	sum := map[string]int{}
	for _, r := range raws {
		if v.netns != 0 && r.Netns != v.netns {
			continue
		}
		c := Count{Reason: v.k.ReasonName(r.Reason), Function: v.k.function(r.Location), Packets: r.packets}
		if v.netns != 0 && r.Ifindex != 0 {
			c.Interface = v.iface(ctx, r.Ifindex)
		}
		if i, ok := sum[c.key()]; ok {
			s.Counts[i].Packets += c.Packets // two sites in one function
			continue
		}
		sum[c.key()] = len(s.Counts)
		s.Counts = append(s.Counts, c)
	}
	Sort(s.Counts)
	return s, nil
}

// iface names an ifindex of v's namespace, listing its links again when it
// meets one it does not know.
func (v *Local) iface(ctx context.Context, index uint32) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if name, ok := v.names[index]; ok {
		return name
	}
	v.names = map[uint32]string{}
	if out, err := v.t.Run(ctx, "ip", "-j", "link", "show"); err == nil {
		if links, err := parse.ParseIPLink(bytes.NewReader(out)); err == nil {
			for _, l := range links {
				v.names[uint32(l.Index)] = l.Name
			}
		}
	}
	if _, ok := v.names[index]; !ok {
		v.names[index] = fmt.Sprintf("ifindex %d", index)
	}
	return v.names[index]
}

// Close lets go of the kernel counter (detached with the last view).
func (v *Local) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.closed && v.shared {
		release()
	}
	v.closed = true
	return nil
}

// Built is true: this build carries the drop sampler.
const Built = true

// ForTarget opens the sampler that fits t: this process's kernel counter for
// a target on this machine's kernel (local, netns), "wgperf drops --serve"
// on the host for any other (ssh). Where there is none it returns a sampler
// of tier "none" whose status says why; it never fails a measurement.
func ForTarget(ctx context.Context, t target.Target) Sampler {
	spec, err := target.SpecOf(t)
	if err != nil {
		return None(t.String(), "not a host wgperf can attach a sampler to")
	}
	var s Sampler
	if spec.Kind().ThisKernel {
		s, err = OpenLocal(ctx, t)
	} else {
		s, err = OpenRemote(ctx, t)
	}
	if err != nil {
		return None(t.String(), err.Error())
	}
	return s
}
