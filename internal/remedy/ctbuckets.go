package remedy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	// KindConntrackBuckets: buckets (the hash table's new size, 1024..MaxConntrackBuckets).
	KindConntrackBuckets = "conntrack-buckets"
)

// MaxConntrackBuckets bounds the hash a fix asks for: 2^24 buckets are 128
// MiB of kernel memory on a 64-bit machine.
const MaxConntrackBuckets = 1 << 24

// Where the conntrack hash's size is read and written. The module parameter
// resizes it on every kernel (in the initial network namespace only); the
// sysctl is writable from Linux 5.10 and shows the same value.
const (
	HashsizeParam   = "/sys/module/nf_conntrack/parameters/hashsize"
	bucketsSysctl   = "net.netfilter.nf_conntrack_buckets"
	initNetnsMarker = "/proc/sys/net/core/netdev_max_backlog"
)

// ModprobeConf is the file wgperf owns for module options read at boot.
const ModprobeConf = "/etc/modprobe.d/90-wgperf.conf"

// conntrackBuckets resizes the connection-tracking hash table: with more
// entries than a few per bucket, every packet's lookup walks a long chain.
type conntrackBuckets struct{ buckets int }

// ConntrackBuckets sets the conntrack hash to buckets buckets now and when
// the module loads at boot (its modprobe.d option).
func ConntrackBuckets(buckets int) (Remedy, error) {
	if buckets < 1024 || buckets > MaxConntrackBuckets {
		return nil, fmt.Errorf("%d conntrack buckets: want 1024..%d", buckets, MaxConntrackBuckets)
	}
	a := &conntrackBuckets{buckets: buckets}
	n := strconv.Itoa(buckets)
	return shown{a, []string{
		shell.Join("sysctl", "-w", bucketsSysctl+"="+n),
		"# before Linux 5.10: " + WriteSysfs(HashsizeParam, n),
	}, []finding.ConfigSnippet{{Path: ModprobeConf, Lines: []string{a.confLine()}}}}, nil
}

func parseConntrackBuckets(p params) (Remedy, error) {
	n, err := p.int("buckets")
	if err != nil {
		return nil, err
	}
	return ConntrackBuckets(n)
}

func (a *conntrackBuckets) Kind() string { return KindConntrackBuckets }

func (a *conntrackBuckets) Params() map[string]string {
	return map[string]string{"buckets": strconv.Itoa(a.buckets)}
}

func (a *conntrackBuckets) Describe() string {
	return fmt.Sprintf("resize the connection-tracking hash to %d buckets now and when nf_conntrack loads at boot (%s)", a.buckets, ModprobeConf)
}

const hashsizeOption = "options nf_conntrack hashsize"

func (a *conntrackBuckets) confLine() string { return hashsizeOption + "=" + strconv.Itoa(a.buckets) }

func (a *conntrackBuckets) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.ReadFile(ctx, HashsizeParam)
	if err != nil {
		return Step{}, fmt.Errorf("%s: nf_conntrack is not loaded (no %s): no table to resize", env.T, HashsizeParam)
	}
	now, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || now <= 0 {
		return Step{}, fmt.Errorf("%s: %s holds %q, not a size", env.T, HashsizeParam, shell.Terminal(string(out)))
	}
	// The hash is the machine's: a child network namespace (a container, a
	// lab node) sees it read-only and the kernel refuses the write there.
	// netdev_max_backlog exists in the initial namespace only.
	if ok, err := env.exists(ctx, initNetnsMarker); err != nil {
		return Step{}, err
	} else if !ok {
		return Step{}, fmt.Errorf("%s: the conntrack hash is the machine's and this is a child network namespace: resize it on the machine itself", env.T)
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("nf_conntrack hash: %d -> %d buckets", now, a.buckets)}
	if now < a.buckets {
		n := strconv.Itoa(a.buckets)
		st.Commands = []string{WriteSysfs(HashsizeParam, n)}
		st.Undo = []string{WriteSysfs(HashsizeParam, strconv.Itoa(now))}
	} else {
		st.Summary = fmt.Sprintf("nf_conntrack hash: %d buckets already (at least %d)", now, a.buckets)
	}
	if env.Platform == OpenWrt {
		st.Notes = append(st.Notes, "runtime only on OpenWrt: add hashsize="+strconv.Itoa(a.buckets)+" to the nf_conntrack line of /etc/modules.d/nf-conntrack to keep it")
	} else if len(st.Commands) > 0 {
		fc, err := env.change(ctx, env.Path(ModprobeConf), func(old []byte, _ bool) ([]byte, error) {
			return setConfLine(old, hashsizeOption, a.confLine(), "# Written by wgperf fix; remove a line (or this file) to undo at next boot.\n"), nil
		})
		if err != nil {
			return Step{}, err
		}
		if fc != nil {
			st.Files = append(st.Files, *fc)
		}
		st.Notes = append(st.Notes, "kept where nf_conntrack is a module (modprobe.d); a kernel with it built in needs nf_conntrack.hashsize="+
			strconv.Itoa(a.buckets)+" on its command line")
	}
	st.Done = len(st.Commands) == 0
	return st, nil
}
