package lab

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Knee is the lab's stand-in for a receiver that collapses under load (the
// remote-users case's NAS, whose userspace WireGuard piled onto one CPU):
// it passes every packet while the last second's rate stays at or below
// the knee; once a second's worth goes above it, it collapses for Hold,
// passing half the knee (a token bucket, the rest dropped, as an
// overflowing queue does), then recovers. A sender that pushes past the knee
// swings between the two in cycles; one capped just below it never
// collapses. Its decisions depend only on the rate it is offered, so a slow
// or busy machine sees the same cycles as long as it carries the knee.
type Knee struct {
	Mbit int
	Hold time.Duration

	buckets   [kneeBuckets]int64 // bytes per kneeBucket, the last second
	head      int                // the bucket now
	headStart time.Time
	until     time.Time // collapsed until then
	tokens    float64   // bytes the collapsed knee may pass
	last      time.Time
}

const (
	kneeBuckets = 10
	kneeBucket  = 100 * time.Millisecond
	// kneeBurst is the least burst the collapsed knee keeps: 10 ms of half
	// the knee, and at least a userspace sender's batch (64 KB of
	// datagrams at once). At 20 Mbit/s 10 ms were 7.5 KB, five datagrams
	// of each batch: the knee passed a fifth of half its rate, TCP crawled at
	// 0.4 Mbit/s and doctor found no knee to cap below.
	kneeBurst = 64 << 10
)

// Pass decides one packet of size bytes arriving at now: true to forward
// it. It is pure apart from its own state (the clock is given).
func (k *Knee) Pass(now time.Time, size int) bool {
	k.advance(now)
	if now.Before(k.until) {
		rate := float64(k.Mbit) * 1e6 / 8 / 2 // half the knee, in bytes/s
		k.tokens = min(k.tokens+rate*now.Sub(k.last).Seconds(), max(rate/100, kneeBurst))
		k.last = now
		if k.tokens < float64(size) {
			return false
		}
		k.tokens -= float64(size)
		return true
	}
	k.buckets[k.head] += int64(size)
	var sum int64
	for _, b := range k.buckets {
		sum += b
	}
	if float64(sum)*8 > float64(k.Mbit)*1e6 {
		// Past the knee: collapse, and count the second afresh afterwards.
		k.until, k.last, k.tokens = now.Add(k.Hold), now, 0
		k.buckets = [kneeBuckets]int64{}
	}
	return true
}

// advance moves the ring of buckets to now.
func (k *Knee) advance(now time.Time) {
	if k.headStart.IsZero() {
		k.headStart = now
		return
	}
	for n := 0; now.Sub(k.headStart) >= kneeBucket && n <= kneeBuckets; n++ {
		k.head = (k.head + 1) % kneeBuckets
		k.buckets[k.head] = 0
		k.headStart = k.headStart.Add(kneeBucket)
	}
	if now.Sub(k.headStart) >= kneeBucket { // idle for more than a second
		k.headStart = now
	}
}

// RunKnee serves a Knee on TUN device iface: it reads every packet routed
// into it, drops what the knee drops and writes the rest back, so the kernel
// forwards it on as if it had just arrived. It runs until SIGTERM.
func RunKnee(iface string, mbit int, hold time.Duration) error {
	if mbit <= 0 || hold <= 0 {
		return fmt.Errorf("knee %d Mbit/s, hold %v: want both above zero", mbit, hold)
	}
	fd, err := openTUN(iface)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	k := &Knee{Mbit: mbit, Hold: hold}
	go readPackets(fd, func(pkt []byte) {
		if k.Pass(time.Now(), len(pkt)) {
			_, _ = unix.Write(fd, pkt)
		}
	})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}

// kneeTable is the routing table that sends A's WireGuard packets to the knee.
const kneeTable = "101"

// startKnee puts a Knee on R in front of B's WireGuard: the tunnel's packets
// from A (UDP to the WireGuard port, arriving on eth-a) go through TUN
// knee0 and come back out of it to be forwarded as usual. Only the tunnel's
// own messages meet it, in one direction, like the receiver it stands for.
func (l *Lab) startKnee(ctx context.Context) error {
	cfg := l.Config
	mbit := cfg.Underlay.RateMbit * cfg.KneePct / 100
	if mbit <= 0 {
		return fmt.Errorf("a knee at %d%% needs a shaped underlay (--rate)", cfg.KneePct)
	}
	r := l.Nodes["r"]
	pid, err := l.detach(ctx, r, "knee", "lab", "_knee", "--interface", "knee0", "--mbit", fmt.Sprint(mbit), "--hold", kneeHold.String())
	if err != nil {
		return err
	}
	r.KneePID = pid
	if err := l.waitFor(func() bool { _, err := l.Target("r").Run(ctx, "ip", "link", "show", "dev", "knee0"); return err == nil }, pid, "knee", l.logPath(r, "knee")); err != nil {
		return err
	}
	b := &builder{lab: l}
	b.on("r", "ip", "link", "set", "dev", "knee0", "txqueuelen", "10000", "up")
	b.on("r", "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.knee0.rp_filter=0")
	b.on("r", "ip", "route", "add", "default", "dev", "knee0", "table", kneeTable)
	// WireGuard's own messages only (their first four bytes: a type 1 to 4
	// and three zero bytes), as the receiver's CPU meets them: other UDP to
	// the port (doctor's run to WireGuard's port, rewritten on arrival to
	// iperf3's) passes, as it would on the real receiver.
	b.on("r", "nft", fmt.Sprintf("add table ip labknee; add chain ip labknee pre { type filter hook prerouting priority -150; }; "+
		"add rule ip labknee pre iifname eth-a udp dport %d @th,64,32 { 0x01000000, 0x02000000, 0x03000000, 0x04000000 } meta mark set %s", WGPort, kneeMark))
	b.on("r", "ip", "rule", "add", "iif", "eth-a", "fwmark", kneeMark, "lookup", kneeTable, "priority", "90")
	return b.run(ctx)
}

// kneeMark marks the WireGuard messages the knee takes.
const kneeMark = "0x4b4e"

// kneeHold is how long the knee stays collapsed: with the second it takes to
// trip and the climb back, a cycle of about 6 s, five or so in a 30-second run.
const kneeHold = 4 * time.Second
