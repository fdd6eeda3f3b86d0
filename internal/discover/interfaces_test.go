package discover

import (
	"context"
	"slices"
	"testing"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The host's answer is foreign text: only interface names are offered.
func TestInterfaces(t *testing.T) {
	h := targettest.New("ssh:root@golem")
	h.On(shell.Join("sh", "-c", interfacesScript), "wg1\nwg0\n$(reboot)\nwg0\n\x1b]52;c;x\x07\nwgperf-a-very-long-name-indeed\n")
	got, err := Interfaces(context.Background(), h)
	if want := []string{"wg0", "wg1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Interfaces: %q, %v; want %q", got, err, want)
	}
	if _, err := Interfaces(context.Background(), targettest.New("local")); err == nil {
		t.Error("a host that cannot run the script: no error")
	}
}
