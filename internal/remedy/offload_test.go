package remedy

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The PMTUD case's own workaround, ethtool -K PHY tso off gso off gro off,
// planned on recorded ethtool -k outputs: a host NIC with all three on, and
// a lab veth whose GRO is off already (left alone, and not undone).
func TestOffloadPlanSegmentationOff(t *testing.T) {
	off := []Feature{{Name: "tcp-segmentation-offload"}, {Name: "generic-segmentation-offload"}, {Name: "generic-receive-offload"}}
	for _, tt := range []struct {
		name, recorded string
		want           Step
	}{
		{name: "host NIC", recorded: "k-host-nic.txt", want: Step{
			Summary:  "eth0 offloads: tcp-segmentation-offload on, generic-segmentation-offload on, generic-receive-offload on",
			Commands: []string{"ethtool -K eth0 tcp-segmentation-offload off generic-segmentation-offload off generic-receive-offload off"},
			Undo:     []string{"ethtool -K eth0 tcp-segmentation-offload on generic-segmentation-offload on generic-receive-offload on"},
		}},
		{name: "veth with GRO off", recorded: "k-veth.txt", want: Step{
			Summary:  "eth0 offloads: tcp-segmentation-offload on, generic-segmentation-offload on, generic-receive-offload off",
			Commands: []string{"ethtool -K eth0 tcp-segmentation-offload off generic-segmentation-offload off"},
			Undo:     []string{"ethtool -K eth0 tcp-segmentation-offload on generic-segmentation-offload on"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := targettest.New("ssh:gw")
			h.On("ethtool -k eth0", string(testutil.ReadTestdata(t, "collect", "ethtool", tt.recorded)))
			st, err := must(t)(Offload("eth0", off)).Plan(context.Background(), &Env{T: h, Root: "/"})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Kind = KindOffload
			tt.want.Notes = []string{"runtime only: add the ethtool line to eth0's post-up hook, or it is gone when the device comes up again"}
			if d := cmp.Diff(tt.want, st); d != "" {
				t.Errorf("step (-want +got)\n%s", d)
			}
		})
	}
}
