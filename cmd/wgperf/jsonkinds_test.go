//go:build !router

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
)

// drops, version and lab status print JSON documents as the other commands
// do (their schemas are checked in TestSchemasValidateDocuments): each takes
// --json, and version's says which build this is by field.
func TestDropsVersionLabStatusTakeJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version", "--json"}, &out, &errOut); code != exitOK {
		t.Fatalf("version --json: exit %d: %s", code, errOut.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("version --json is not JSON: %v\n%s", err, out.String())
	}
	if v["kind"] != "version" || v["schema_version"] != float64(1) || v["wgperf_version"] != version ||
		v["build"] != "full" || v["drop_sampler"] != true || v["go_version"] == "" {
		t.Errorf("version --json = %v", v)
	}
	// Without a lab or a namespace they cannot run, but they say why
	// instead of refusing the flag.
	for _, tc := range []struct {
		args []string
		why  string
	}{
		{[]string{"lab", "status", "--json", "--name", "nosuch"}, `lab "nosuch" is not up`},
		{[]string{"drops", "--json", "--host", "netns:wgperf-no-such-ns", "--duration", "1s"}, "kernel drop reasons on netns:wgperf-no-such-ns: none"},
	} {
		out.Reset()
		errOut.Reset()
		if code := run(tc.args, &out, &errOut); code != exitFailed || !strings.Contains(errOut.String(), tc.why) {
			t.Errorf("wgperf %s: exit %d, stderr %q; want 3 and %q", strings.Join(tc.args, " "), code, errOut.String(), tc.why)
		}
	}
}

// lab status --json gives times as times: a peer's latest handshake is a
// timestamp (absent when it never shook hands), not "4s ago"; a status that
// read nothing has empty lists, not null.
func TestLabStatusReport(t *testing.T) {
	st := &lab.Status{Peers: []lab.PeerStatus{
		{Interface: "wg-doc-a", PublicKey: "k1", Handshake: "4s ago", LatestHandshake: &labStatusHandshake},
		{Interface: "wg-doc-b", PublicKey: "k2", Handshake: "never"}}}
	var out bytes.Buffer
	if err := writeJSON(&out, "lab-status", labStatusExample().Report(st)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Lab, Topology, WireGuard, DelayBy string
		DelayMs                           int `json:"delay_ms"`
		Peers                             []map[string]any
		Nodes, Shaping                    []any
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Lab != "doc" || got.Topology != "site-to-site" || got.WireGuard != "userspace" || got.DelayMs != 10 {
		t.Errorf("lab status --json = %s", out.String())
	}
	if hs := got.Peers[0]["latest_handshake"]; hs != labStatusHandshake.Format(time.RFC3339) {
		t.Errorf("latest_handshake %v, want %s", hs, labStatusHandshake.Format(time.RFC3339))
	}
	if _, ok := got.Peers[1]["latest_handshake"]; ok || strings.Contains(out.String(), "ago") || strings.Contains(out.String(), "never") {
		t.Errorf("a handshake is a time or absent:\n%s", out.String())
	}
	if got.Nodes == nil || got.Shaping == nil || !strings.Contains(out.String(), `"nodes": []`) {
		t.Errorf("empty lists are not []:\n%s", out.String())
	}
}
