package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// This file holds how the lab starts its node processes (WireGuard nodes,
// the delay element, background pings and the like) detached in their
// namespaces at nodeNice, logs them and waits for them to be ready.

// nodeNice is the CPU priority of the lab's node processes (WireGuard, the
// delay element, the router node's dropbear and what it runs): the routers they stand for have their CPU to themselves, so
// another job on this machine must not slow the lab's tunnels and turn a
// verdict. They are mostly idle; when they forward, they go first.
const nodeNice = -10

// nodeSession is the shell text that runs name with args in a session of its
// own (setsid, so it outlives the command that started it) at nodeNice, and
// its session's autogroup too: with the kernel's autogroup scheduling a nice
// only counts inside a session. The process keeps the pid the shell's $! gives.
func nodeSession(name string, args ...string) string {
	nice := strconv.Itoa(nodeNice)
	run := fmt.Sprintf(`echo %s 2>/dev/null >/proc/self/autogroup; exec nice -n %s "$@"`, nice, nice)
	return "setsid sh -c " + shell.Join(run) + " - " + shell.Join(name, args...)
}

// detach starts "wgperf ARGS" in a node's namespace as a node process
// (nodeSession), logging to the lab's folder; it returns the pid.
func (l *Lab) detach(ctx context.Context, n *Node, logName string, args ...string) (int, error) {
	return l.detachProgram(ctx, n, logName, l.Executable, args...)
}

// detachProgram starts program in a node's namespace as a node process.
func (l *Lab) detachProgram(ctx context.Context, n *Node, logName, program string, args ...string) (int, error) {
	logFile := l.logPath(n, logName)
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 & echo $!", nodeSession(program, args...), shell.Join(logFile))
	out, err := target.Netns(n.Netns).Run(ctx, "sh", "-c", script)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

func (l *Lab) logPath(n *Node, logName string) string {
	return filepath.Join(StateDir, l.Config.Name, n.Name+"-"+logName+".log")
}

// waitFor polls ready for up to 10 s while process pid lives; on failure it
// quotes the process's log.
func (l *Lab) waitFor(ready func() bool, pid int, what, logFile string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		if !target.ProcessLive(pid) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(logFile)
	return fmt.Errorf("%s did not start: %s", what, strings.TrimSpace(string(log)))
}

// startNode launches the node detached (setsid), so it outlives "lab up", and
// waits for its UAPI socket.
func (l *Lab) startNode(ctx context.Context, n *Node, ifname string) (int, error) {
	args := []string{"lab", "_node", "--interface", ifname, "--mtu", strconv.Itoa(l.Config.WGMTU)}
	if l.Config.UDPBuffer != 0 {
		args = append(args, "--udp-buffer", strconv.Itoa(l.Config.UDPBuffer))
	}
	if l.Config.UDPBufferPercent > 0 {
		args = append(args, "--udp-buffer-percent", strconv.Itoa(l.Config.UDPBufferPercent))
	}
	pid, err := l.detach(ctx, n, ifname, args...)
	if err != nil {
		return 0, err
	}
	return pid, l.waitFor(func() bool { _, err := os.Stat(socketPath(ifname)); return err == nil }, pid, "WireGuard node "+ifname, l.logPath(n, ifname))
}

// RaiseToNodePriority runs the calling process at nodeNice from now on, so
// what it starts on the lab's nodes (iperf3, ping) goes first like the nodes
// themselves: a measurement must not lose to a job sharing this process's
// session. Nice is per thread on Linux and new threads inherit it, so every
// thread is reniced (twice, for one created meanwhile).
func RaiseToNodePriority() error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nodeNice); err != nil {
				return fmt.Errorf("renice thread %d: %w", tid, err)
			}
		}
	}
	return nil
}
