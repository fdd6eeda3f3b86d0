package main

import (
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestSSHOneConnectionPerCommand runs diagnose, mtu and doctor against a host behind
// a 20 ms round trip (the lab's sshd in node B, reached from A through the
// tunnel) and counts the TCP connections sshd saw: one per command. The same
// commands through an ssh that cannot multiplex (each remote command connects
// by itself, as wgperf did before) give the figures to compare, logged with
// the wall times.
// diagnose only collects, in one remote shell (target.Shell): one connection
// either way.
func TestSSHOneConnectionPerCommand(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "rtcmd", Underlay: lab.Shape{DelayMs: 10}})
	spec := labtest.SSHD(t, l, "b")
	syns := labtest.SYNCounter(t, l, "b", labtest.SSHPort)
	target.CloseAll() // the setup's own probe connection
	sharing := target.SSHCommand
	i := slices.Index(sharing, "ssh")
	noSharing := append(append(append([]string{}, sharing[:i]...), "sh", "-c", noMultiplexSSH, "ssh"), sharing[i:]...)
	t.Cleanup(func() { target.SSHCommand = sharing })

	commands := map[string][]string{
		"diagnose": {"diagnose", "--host", spec},
		// The DF pings run on the ssh host, towards A's underlay address.
		"mtu": {"mtu", "--client", spec, "--underlay-addr", l.Node("a").UnderlayAddr},
		// One end: every check, and the DF search to the peer's endpoint.
		"doctor": {"doctor", "--client", spec},
	}
	for _, name := range []string{"diagnose", "mtu", "doctor"} {
		args := commands[name]
		var conns [2]int
		var secs [2]float64
		for i, shared := range []bool{false, true} {
			target.SSHCommand = noSharing
			if shared {
				target.SSHCommand = sharing
			}
			base, start := syns(), time.Now()
			if code := run(args, io.Discard, os.Stderr); code == exitFailed {
				t.Fatalf("%v (sharing %v): exit %d", args, shared, code)
			}
			conns[i], secs[i] = syns()-base, time.Since(start).Seconds()
		}
		target.SSHCommand = sharing
		t.Logf("%s over ssh, 20 ms RTT: %d connections in %.2f s without sharing, %d in %.2f s with",
			name, conns[0], secs[0], conns[1], secs[1])
		if conns[1] != 1 {
			t.Errorf("%s opened %d ssh connections, want 1", name, conns[1])
		}
		if name == "diagnose" {
			if conns[0] != 1 {
				t.Errorf("diagnose without sharing opened %d ssh connections, want 1 (one remote shell)", conns[0])
			}
			continue
		}
		if conns[0] <= 1 {
			t.Errorf("%s without sharing opened %d connections: the count proves nothing", name, conns[0])
		}
	}
}

// noMultiplexSSH stands in for an ssh that cannot multiplex: asked to start
// a shared connection it does nothing (and reports success), and it runs
// every other command as ssh without the control socket options, so each
// command connects by itself.
const noMultiplexSSH = `for a; do case $a in ControlMaster=yes) exit 0;; esac; done
opt=
for a; do
	shift
	if [ -n "$opt" ]; then
		opt=
		case $a in ControlMaster=*|ControlPath=*) ;; *) set -- "$@" -o "$a";; esac
	elif [ "$a" = -o ]; then
		opt=1
	else
		set -- "$@" "$a"
	fi
done
exec "$@"`
