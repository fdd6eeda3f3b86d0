package exporter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/fleet"
)

// sdGroups is an inventory's target groups as fleet.PrometheusTargets gives
// them: two routers the exporter may collect, one host outside
// --probe.allow, and a spec /probe refuses as no target at all.
var sdGroups = []fleet.TargetGroup{
	{Targets: []string{"ssh:root@r1"}, Labels: map[string]string{"wgperf_host": "r1", "wgperf_group": "routers", "wgperf_groups": ",routers,"}},
	{Targets: []string{"ssh:root@elsewhere"}, Labels: map[string]string{"wgperf_host": "elsewhere"}},
	{Targets: []string{"ssh:root@r2:2222"}, Labels: map[string]string{"wgperf_host": "gw2"}},
	{Targets: []string{"ssh:root@r1@evil.example"}, Labels: map[string]string{"wgperf_host": "evil"}},
}

// sdGet fetches /sd and returns the status, Content-Type and body.
func sdGet(t *testing.T, base string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(base + SDPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestDiscoveryServesAdmittedTargets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allow   []string
		groups  []fleet.TargetGroup
		err     error
		status  int
		want    []fleet.TargetGroup // for 200
		leftOut []string
	}{
		{name: "admitted targets only", allow: []string{"ssh:root@r*"}, groups: sdGroups, status: 200,
			want: []fleet.TargetGroup{sdGroups[0], sdGroups[2]}, leftOut: []string{"ssh:root@elsewhere", "ssh:root@r1@evil.example"}},
		{name: "none admitted", allow: []string{"netns:lab-*"}, groups: sdGroups, status: 200, want: []fleet.TargetGroup{},
			leftOut: []string{"ssh:root@r1", "ssh:root@elsewhere", "ssh:root@r2:2222", "ssh:root@r1@evil.example"}},
		{name: "no --probe.allow", groups: sdGroups[:1], status: 200, want: []fleet.TargetGroup{}, leftOut: []string{"ssh:root@r1"}},
		{name: "limit selects no host", allow: []string{"ssh:*"}, err: fmt.Errorf("hosts.ini: %w", fleet.ErrNoHost), status: 200, want: []fleet.TargetGroup{}},
		{name: "unreadable inventory", allow: []string{"ssh:*"}, err: errors.New("hosts.ini:3: bad line"), status: 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var leftOut []string
			d := &Discovery{
				Load:    func(context.Context) ([]fleet.TargetGroup, error) { return tc.groups, tc.err },
				LeftOut: func(targets []string) { leftOut = targets },
			}
			base := testServer(t, &Site{Prober: NewProber(ProbeOptions{Allow: tc.allow}), Discovery: d})
			status, ctype, body := sdGet(t, base)
			if status != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", status, tc.status, body)
			}
			if !reflect.DeepEqual(leftOut, tc.leftOut) {
				t.Errorf("left out %q, want %q", leftOut, tc.leftOut)
			}
			if status != 200 {
				if !strings.Contains(body, "bad line") {
					t.Errorf("the error does not say why: %s", body)
				}
				return
			}
			if ctype != "application/json" {
				t.Errorf("Content-Type %q, want application/json (http_sd)", ctype)
			}
			var got []fleet.TargetGroup
			if err := json.Unmarshal([]byte(body), &got); err != nil || !strings.HasPrefix(body, "[") {
				t.Fatalf("not a JSON array of target groups (%v): %s", err, body)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("/sd served %s, want %v", body, tc.want)
			}
		})
	}
}

// One reading of the inventory answers the requests of DefaultSDCacheTTL;
// a request after it reads the inventory again, so an edit shows.
func TestDiscoveryRereadsAfterTTL(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)}
	reads := 0
	groups := sdGroups[:1]
	d := &Discovery{Now: clock.Now, Load: func(context.Context) ([]fleet.TargetGroup, error) {
		reads++
		return groups, nil
	}}
	base := testServer(t, &Site{Prober: NewProber(ProbeOptions{Allow: []string{"ssh:root@r*"}}), Discovery: d})
	sdGet(t, base)
	groups = sdGroups[:3] // the inventory is edited
	if _, _, body := sdGet(t, base); reads != 1 || strings.Contains(body, "r2") {
		t.Errorf("within the TTL: %d readings, served %s; want 1, the first reading", reads, body)
	}
	clock.Add(DefaultSDCacheTTL)
	if _, _, body := sdGet(t, base); reads != 2 || !strings.Contains(body, "ssh:root@r2:2222") {
		t.Errorf("after the TTL: %d readings, served %s; want 2, with the edit", reads, body)
	}
}

// Without an inventory the exporter has no /sd.
func TestDiscoveryNotServedWithoutInventory(t *testing.T) {
	base := testServer(t, &Site{Prober: NewProber(ProbeOptions{Allow: []string{"ssh:*"}})})
	if status, _, body := sdGet(t, base); status != 404 {
		t.Errorf("/sd without --inventory: HTTP %d, want 404: %s", status, body)
	}
}
