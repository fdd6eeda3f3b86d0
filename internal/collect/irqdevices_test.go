package collect

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/testutil"
)

// On this machine's VM (recorded with the grep collect runs) eth0 is a virtio
// NIC: its queues' interrupts are "virtio2-input.0" and "virtio2-output.0",
// and its PCI function's msi_irqs name them; vsock's virtio3 rows stay
// without a device.
func TestLabelIRQDevicesVirtio(t *testing.T) {
	files := parseGrepFiles(bytes.NewReader(testutil.ReadTestdata(t, "collect", "irq", "grep-virtio-vm.txt")))
	irqs, err := parse.ParseInterrupts(strings.NewReader(files["/proc/interrupts"].Content), []string{"eth0", "ifb0", "ifb1"})
	if err != nil {
		t.Fatal(err)
	}
	labelIRQDevices(irqs, files)
	got := map[string]string{}
	for _, q := range irqs {
		got[q.Name] = q.Device
	}
	want := map[string]string{"virtio2-input.0": "eth0", "virtio2-output.0": "eth0", "virtio3-rx": "", "virtio3-tx": ""}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
}
