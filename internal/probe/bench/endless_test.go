//go:build !router

package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

// TestSamplersOfEndlessHosts: bench (and doctor, whose bench takes the same
// Config.Drops) opens a sampler on each end before it measures; two ssh
// ends whose sampler prints one line without end used to hold it there for
// ever. Both are now given up, each saying why, and the bench goes on.
func TestSamplersOfEndlessHosts(t *testing.T) {
	oldCmd := target.SSHCommand
	target.SSHCommand = []string{"sh", "-c", "while :; do printf '%s' xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done", "endless-ssh"}
	defer func() { target.SSHCommand = oldCmd }()
	own := target.HostSSH{Conns: target.SSHConns{Own: true}}
	client, err := target.ParseWith("ssh:root@client.invalid", own)
	if err != nil {
		t.Fatal(err)
	}
	server, err := target.ParseWith("ssh:root@server.invalid", own)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *endSamplers, 1)
	go func() {
		done <- openSamplers(context.Background(), Config{Client: client, Server: server, Drops: drops.ForTarget})
	}()
	var e *endSamplers
	select {
	case e = <-done:
	case <-time.After(30 * time.Second): // a liveness bound: it used to never return
		t.Fatal("bench's samplers still opening after 30 s")
	}
	defer e.Close()
	for _, st := range e.statuses() {
		if st.Tier != drops.TierNone || !strings.Contains(st.Why, "longer than") {
			t.Errorf("sampler of an endless host: %+v", st)
		}
	}
}
