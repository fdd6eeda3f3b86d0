package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestTableGolden holds lab run's table, and its JSON, on a recorded run
// (a black hole that passed, a lossy CUBIC case doctor missed).
func TestTableGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "report", "labrun.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Scenarios []*Result `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	WriteTable(&table, run.Scenarios, false)
	testutil.Golden(t, filepath.Join("testdata", "labrun-table.txt"), table.Bytes())
	js, err := json.MarshalIndent(run.Scenarios, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "labrun.json"), append(js, '\n'))
}

// TestLabECMPTextGolden holds what "fix ecmp --apply --verify" prints in a lab.
func TestLabECMPTextGolden(t *testing.T) {
	res := &LabECMP{Lab: "doc", Tunnels: []lab.Tunnel{
		{Index: 0, Port: 51820, IfA: "wg-doc-a", IfB: "wg-doc-b", AddrA: "10.77.0.1", AddrB: "10.77.0.2"},
		{Index: 1, Port: 51821, IfA: "wg-doc-a1", IfB: "wg-doc-b1", AddrA: "10.77.1.1", AddrB: "10.77.1.2", UplinkA: "wan2"},
	}, Commands: []string{"ip route replace 10.78.0.0/24 nexthop dev wg-doc-a weight 1 nexthop dev wg-doc-a1 weight 1"},
		// As measured in a multi-WAN lab with two 100 Mbit/s uplinks (wireguard-go): R's deep tbf queues lose nothing.
		Verify: &LabECMPVerify{Addr: "10.78.0.2", Streams: 16, TunnelsBefore: 1, BeforeMbit: 91.6, AfterMbit: 183.1, Scaling: 2.00, SecondsPerTest: 3,
			Before: ECMPCost{Retransmits: 0, Reordered: 0}, After: ECMPCost{Retransmits: 0, Reordered: 0}}}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "ecmp-apply.txt"), b.Bytes())
	// Paths that lose what one tunnel did not (the multi-tunnel case's
	// figures; the lab's tbf queues never made them): the report says so.
	res.Verify.Before, res.Verify.After = ECMPCost{Retransmits: 432, Reordered: -1}, ECMPCost{Retransmits: 119501, Reordered: -1}
	b.Reset()
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := "cost: retransmissions went from 432 to 119,501"; !strings.Contains(b.String(), want) || strings.Contains(b.String(), "reordered") {
		t.Errorf("a costly spread:\n%s\nwant %q, and no reordering where it was not read", b.String(), want)
	}
	if (LabECMPVerify{Before: ECMPCost{Retransmits: 10}, After: ECMPCost{Retransmits: 90}}).Costly() {
		t.Error("80 more retransmissions called a cost")
	}
}

// TestReportGolden holds lab run's report document on a recorded run; the
// report package renders it (its tests read this file, its HTML golden holds
// the page).
func TestReportGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "report", "labrun.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ReadReport(&document.Doc{Kind: document.LabRun, Data: b})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("..", "..", "testdata", "report", "labrun.document.json"), append(js, '\n'))
	if _, err := ReadReport(&document.Doc{Kind: document.LabRun, Data: []byte(`{"scenarios": []}`)}); err == nil {
		t.Error("a lab run without scenarios has a report")
	}
}
