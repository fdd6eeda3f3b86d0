package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

var deployDir = filepath.Join("..", "..", "deploy")

func readDeploy(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAlertRules runs the rule unit tests of deploy/prometheus with promtool.
func TestAlertRules(t *testing.T) {
	testutil.RequireTools(t, "promtool")
	dir, err := filepath.Abs(filepath.Join(deployDir, "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, args := range [][]string{
		{"check", "rules", filepath.Join(dir, "alerts.yml")},
		{"test", "rules", filepath.Join(dir, "alerts_test.yml")},
		// The example scrape jobs, the /probe relabelling among them.
		{"check", "config", filepath.Join(dir, "scrape.yml")},
	} {
		if out, err := target.Local().Run(ctx, "promtool", args...); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

var metricName = regexp.MustCompile(`\bwgperf_[a-z0-9_]+`)

// knownNames are the metric names the exporter can produce.
func knownNames() map[string]bool {
	names := map[string]bool{}
	for _, d := range allDescs() {
		names[d.Name()] = true
	}
	return names
}

// A renamed metric must not silently break an alert or a dashboard panel.
func TestDeployUsesExportedMetrics(t *testing.T) {
	known := knownNames()
	for _, f := range []string{"prometheus/alerts.yml", "prometheus/alerts_test.yml", "grafana/wgperf.json"} {
		used := metricName.FindAllString(readDeploy(t, f), -1)
		if len(used) == 0 {
			t.Errorf("%s uses no wgperf metric", f)
		}
		for _, n := range used {
			if !known[n] {
				t.Errorf("%s uses %s, which the exporter does not export", f, n)
			}
		}
	}
	// Finding IDs in the rules must be real catalog IDs.
	ids := regexp.MustCompile(`id(?:=|!~)"([^"]+)"`)
	for _, m := range ids.FindAllStringSubmatch(readDeploy(t, "prometheus/alerts.yml"), -1) {
		for _, id := range strings.Split(m[1], "|") {
			if !catalog.Has(finding.ID(id)) {
				t.Errorf("alerts.yml names finding %q, not in the catalog", id)
			}
		}
	}
}

// runbookBase is where the alerts' runbook_url pages are: absolute, as
// Alertmanager and its receivers cannot resolve a path in the repository.
const runbookBase = "https://github.com/wgperf/wgperf/blob/main/"

// TestAlertsExplainTheirFinding: every alert about a finding points to its
// explanation, the command and the docs page (runbook_url, whose page
// exists); the catch-all alert points to the page of whichever finding fired it.
func TestAlertsExplainTheirFinding(t *testing.T) {
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(readDeploy(t, "prometheus/alerts.yml")), &rules); err != nil {
		t.Fatal(err)
	}
	const anyID = "{{ $labels.id }}"
	fixedID := regexp.MustCompile(`\bid="([^"]+)"`)
	explained := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			id := ""
			switch m := fixedID.FindStringSubmatch(r.Expr); {
			case m != nil:
				id = m[1]
			case strings.Contains(r.Expr, "wgperf_finding"):
				id = anyID
			}
			explain, docs := r.Annotations["explain"], strings.TrimPrefix(r.Annotations["runbook_url"], runbookBase)
			if id == "" && explain == "" {
				continue // about the exporter or a metric, not one finding
			}
			if id == "" { // a metric alert tied to a finding by hand
				id = strings.TrimPrefix(explain, "wgperf explain ")
			}
			explained++
			if explain != "wgperf explain "+id || docs != "docs/findings/"+id+".md" {
				t.Errorf("%s: annotations explain %q, runbook_url %q; want \"wgperf explain %s\" and \"%sdocs/findings/%s.md\"", r.Alert, explain, r.Annotations["runbook_url"], id, runbookBase, id)
			}
			if id == anyID {
				continue
			}
			if !catalog.Has(finding.ID(id)) {
				t.Errorf("%s: explains %q, not in the catalog", r.Alert, id)
			}
			if _, err := os.Stat(filepath.Join("..", "..", docs)); err != nil {
				t.Errorf("%s: docs page: %v", r.Alert, err)
			}
		}
	}
	if explained < 5 {
		t.Errorf("%d alerts explain a finding, want at least 5", explained)
	}
}

func TestGrafanaDashboard(t *testing.T) {
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
	}
	raw := readDeploy(t, "grafana/wgperf.json")
	// Grafana asks for every declared input on import; one nothing uses only confuses.
	var in struct {
		Inputs []struct {
			Name string `json:"name"`
		} `json:"__inputs"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatal(err)
	}
	for _, i := range in.Inputs {
		if !strings.Contains(raw, "${"+i.Name+"}") {
			t.Errorf("input %s is declared but never used", i.Name)
		}
	}
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("wgperf.json: %v", err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatal("dashboard has no uid or no panels")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d repeated", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if !strings.Contains(q.Expr, `instance=~"$instance"`) || !strings.Contains(q.Expr, `job=~"$job"`) {
				t.Errorf("panel %q query %q ignores the job or host selector", p.Title, q.Expr)
			}
		}
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	if !vars["datasource"] || !vars["job"] || !vars["instance"] {
		t.Errorf("dashboard variables %v, want datasource, job and instance", vars)
	}
}

// TestSystemdUnit has systemd check the unit, pointed at a real wgperf binary.
func TestSystemdUnit(t *testing.T) {
	testutil.RequireTools(t, "systemd-analyze")
	unit := strings.ReplaceAll(readDeploy(t, "systemd/wgperf-exporter.service"), "/usr/local/bin/wgperf", labtest.Binary(t))
	path := filepath.Join(t.TempDir(), "wgperf-exporter.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	// verify prints problems on stderr but may still exit 0.
	out, err := target.Local().Run(context.Background(), "sh", "-c", shell.Join("systemd-analyze", "verify", path)+" 2>&1")
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The hardening must not erode: 4.6 before ssh and netns were made to work, 1.9 after.
	out, err = target.Local().Run(context.Background(), "systemd-analyze", "security", "--offline=yes", "--no-pager", path)
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	if exposure, _ := strconv.ParseFloat(m[1], 64); exposure > 2.0 {
		t.Errorf("systemd-analyze security exposure %.1f, want at most 2.0:\n%s", exposure, out)
	}
}

// Users read the alerts, dashboards and README; "seed 000" is the project's
// own filing and means nothing to them: cases are named by what happened.
func TestNoSeedNumbersForUsers(t *testing.T) {
	seed := regexp.MustCompile(`(?i)\bseeds?\s+0\d\d`)
	files := []string{filepath.Join("..", "..", "README.md")}
	err := filepath.WalkDir(deployDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if seed.MatchString(line) {
				t.Errorf("%s:%d says %q", f, i+1, seed.FindString(line))
			}
		}
	}
}

// Per-peer panels show the peer's name from --peer-names (its key when it has
// none), and every panel's query parses: promtool checks them as rules.
func TestGrafanaPanelsNamePeers(t *testing.T) {
	testutil.RequireTools(t, "promtool")
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal([]byte(readDeploy(t, "grafana/wgperf.json")), &dash); err != nil {
		t.Fatal(err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: panels\n    rules:\n")
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if strings.Contains(tg.LegendFormat, "{{peer}}") {
				t.Errorf("panel %q labels series with the public key: %q", p.Title, tg.LegendFormat)
			}
			if strings.Contains(tg.LegendFormat, "{{name}}") && !strings.Contains(tg.Expr, "group_left(name)") {
				t.Errorf("panel %q shows {{name}} without joining wgperf_wireguard_peer_info", p.Title)
			}
			expr := strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*", "$job", ".*").Replace(tg.Expr)
			n++
			fmt.Fprintf(&rules, "      - record: panel:%d\n        expr: %q\n", n, expr)
		}
	}
	path := filepath.Join(t.TempDir(), "panels.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := target.Local().Run(context.Background(), "promtool", "check", "rules", path); err != nil {
		t.Errorf("promtool check rules (the dashboard's queries): %v\n%s", err, out)
	}
}

// alertRules reads deploy/prometheus/alerts.yml's rules.
func alertRules(t *testing.T) []struct {
	Alert       string            `yaml:"alert"`
	Annotations map[string]string `yaml:"annotations"`
} {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal([]byte(readDeploy(t, "prometheus/alerts.yml")), &rules); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Alert       string            `yaml:"alert"`
		Annotations map[string]string `yaml:"annotations"`
	}
	for _, g := range rules.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// TestAlertsNamedTestedAndRunbooked: every alert is named Wgperf... (no clash
// with the rule sets it is loaded beside), has a runbook_url whose page (and
// section) exists in the repository, is listed in docs/alerts.md, and has a
// promtool unit test in alerts_test.yml in which it fires.
func TestAlertsNamedTestedAndRunbooked(t *testing.T) {
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal([]byte(readDeploy(t, "prometheus/alerts_test.yml")), &tests); err != nil {
		t.Fatal(err)
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			fires[a.Alertname] = fires[a.Alertname] || len(a.ExpAlerts) > 0
		}
	}
	index, err := os.ReadFile(filepath.Join("..", "..", "docs", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	rules := alertRules(t)
	if len(rules) < 8 {
		t.Fatalf("%d alerts, want at least 8", len(rules))
	}
	for _, r := range rules {
		if !strings.HasPrefix(r.Alert, "Wgperf") {
			t.Errorf("alert %s: want a name starting with Wgperf", r.Alert)
		}
		if !fires[r.Alert] {
			t.Errorf("alert %s: no test in alerts_test.yml where it fires", r.Alert)
		}
		if !strings.Contains(string(index), "`"+r.Alert+"`") {
			t.Errorf("alert %s: not listed in docs/alerts.md", r.Alert)
		}
		u, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookBase)
		if !ok {
			t.Errorf("alert %s: runbook_url %q, want a page under %s", r.Alert, r.Annotations["runbook_url"], runbookBase)
			continue
		}
		page, anchor, _ := strings.Cut(u, "#")
		if strings.Contains(page, "{{") {
			continue // the page of whichever finding fired it (TestAlertsExplainTheirFinding)
		}
		b, err := os.ReadFile(filepath.Join("..", "..", page))
		if err != nil {
			t.Errorf("alert %s: runbook page: %v", r.Alert, err)
			continue
		}
		if anchor != "" && anchor != strings.ToLower(r.Alert) || anchor != "" && !strings.Contains(string(b), "\n## "+r.Alert+"\n") {
			t.Errorf("alert %s: runbook_url %s names no \"## %s\" section of %s", r.Alert, r.Annotations["runbook_url"], r.Alert, page)
		}
	}
}

// The kit's comments send people to files: each must exist, in the
// repository (docs/..., deploy/...), in the kit (prometheus/scrape.yml) or
// beside the file (scrape.yml), or be where the packages install the kit
// (/usr/share/wgperf/...).
func TestDeployCommentsCiteFilesThatExist(t *testing.T) {
	file := regexp.MustCompile(`(?:/usr/share/wgperf/)?[A-Za-z0-9_./-]+\.(?:ya?ml|md|json)\b`)
	for _, f := range []string{"prometheus/alerts.yml", "prometheus/scrape.yml", "prometheus/alerts_test.yml"} {
		for _, line := range strings.Split(readDeploy(t, f), "\n") {
			comment, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
			if !ok {
				continue
			}
			for _, name := range file.FindAllString(comment, -1) {
				if strings.Contains(name, "/ID.") {
					continue // a page per finding ID (TestAlertsExplainTheirFinding)
				}
				candidates := []string{filepath.Join("..", "..", name), filepath.Join(deployDir, name), filepath.Join(deployDir, filepath.Dir(f), name)}
				if rest, ok := strings.CutPrefix(name, "/usr/share/wgperf/"); ok {
					candidates = []string{filepath.Join(deployDir, rest)}
				}
				found := false
				for _, c := range candidates {
					if _, err := os.Stat(c); err == nil {
						found = true
					}
				}
				if !found {
					t.Errorf("%s cites %s, which does not exist: %q", f, name, strings.TrimSpace(line))
				}
			}
		}
	}
}

// Graph legends name the host: two hosts' wg0 must not look the same. The
// finding table links each finding's id to its page.
func TestGrafanaLegendsNameInstanceAndFindingsLink(t *testing.T) {
	var dash struct {
		Panels []struct {
			Title       string
			Type        string
			Targets     []struct{ Expr, LegendFormat string }
			FieldConfig struct {
				Overrides []struct {
					Matcher    struct{ ID, Options string }
					Properties []struct {
						ID    string
						Value json.RawMessage
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(readDeploy(t, "grafana/wgperf.json")), &dash); err != nil {
		t.Fatal(err)
	}
	// An aggregation over every host keeps no instance label to show.
	whole := regexp.MustCompile(`^(?:sum|min|max|avg|count)\((?:[^()]|\([^()]*\))*\)$`)
	linked := false
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if tg.LegendFormat != "" && !whole.MatchString(tg.Expr) && !strings.Contains(tg.LegendFormat, "{{instance}}") {
				t.Errorf("panel %q: legend %q does not name the instance", p.Title, tg.LegendFormat)
			}
		}
		for _, o := range p.FieldConfig.Overrides {
			for _, prop := range o.Properties {
				if o.Matcher.Options == "id" && prop.ID == "links" &&
					strings.Contains(string(prop.Value), runbookBase+"docs/findings/${__value.raw}.md") {
					linked = true
				}
			}
		}
	}
	if !linked {
		t.Error("no panel links a finding's id to its page (docs/findings/ID.md)")
	}
}
