// Command dashboard renders the Grafana dashboard deploy/grafana/wgperf.json
// without Grafana: it reads the dashboard's panels (title, targets' expr and
// legendFormat, unit, grid position), asks a Prometheus' HTTP API for each
// query (/api/v1/query_range for time series, /api/v1/query for stats and
// tables) and writes one HTML page of the panels, the charts drawn by the
// HTML report's own renderer (internal/report/svgchart). A query that
// returns nothing is drawn as "no data". scripts/dashboard-shot.sh runs it
// against a real Prometheus scraping the lab and screenshots the page for
// the README (--shrink then makes the screenshot a 256-colour PNG). It prints the page's size, WIDTH,HEIGHT, for chromium's
// --window-size.
//
//	go run ./scripts/dashboard --prometheus http://127.0.0.1:9090 --out dash.html
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/report/svgchart"
)

func main() {
	prom := flag.String("prometheus", "http://127.0.0.1:9090", "Prometheus' base URL")
	dash := flag.String("dashboard", "deploy/grafana/wgperf.json", "the Grafana dashboard to render")
	out := flag.String("out", "dashboard.html", "the HTML page to write")
	span := flag.Duration("range", 10*time.Minute, "the time range shown, ending now")
	step := flag.Duration("step", 10*time.Second, "the range queries' resolution")
	rate := flag.Duration("rate-interval", 30*time.Second, "what $__rate_interval stands for (Grafana: 4 scrape intervals at least)")
	instance := flag.String("instance", ".+", "what $instance stands for (a regular expression: the dashboard's All)")
	width := flag.Int("width", 1600, "the page's width in CSS pixels")
	shrinkPNG := flag.String("shrink", "", "only rewrite this screenshot as a PNG of 256 colours")
	flag.Parse()
	if *shrinkPNG != "" {
		if err := shrink(*shrinkPNG); err != nil {
			fmt.Fprintln(os.Stderr, "dashboard:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*prom, *dash, *out, *span, *step, *rate, *instance, *width); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

// dashboard is the part of a Grafana dashboard this renders.
type dashboard struct {
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H int `json:"h"`
		W int `json:"w"`
		X int `json:"x"`
		Y int `json:"y"`
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit       string   `json:"unit"`
			Min        *float64 `json:"min"`
			Max        *float64 `json:"max"`
			Thresholds struct {
				Steps []struct {
					Color string   `json:"color"`
					Value *float64 `json:"value"`
				} `json:"steps"`
			} `json:"thresholds"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

// series is one result of a query: its labels and its samples.
type series struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"` // range query
	Value  [2]any            `json:"value"`  // instant query
}

// client asks one Prometheus.
type client struct {
	base string
	http http.Client
}

// query runs a PromQL query: over [start, end] every step, or at end alone
// when step is 0.
func (c *client) query(expr string, start, end time.Time, step time.Duration) ([]series, error) {
	v := url.Values{"query": {expr}}
	path := "/api/v1/query"
	if step > 0 {
		path = "/api/v1/query_range"
		v.Set("start", unix(start))
		v.Set("end", unix(end))
		v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	} else {
		v.Set("time", unix(end))
	}
	resp, err := c.http.PostForm(c.base+path, v)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []series `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %w", path, resp.StatusCode, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %q: %s", path, expr, r.Error)
	}
	return r.Data.Result, nil
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }

// sample reads one [time, "value"] pair of the API.
func sample(p [2]any) (t, v float64, ok bool) {
	t, okT := p[0].(float64)
	s, okV := p[1].(string)
	if !okT || !okV {
		return 0, 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0, false
	}
	return t, v, true
}

// variables are Grafana's template variables the dashboard's queries use.
var variables = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// expand puts values in for the dashboard's variables ($name or ${name}),
// as Grafana does before it sends a query; an unknown one stays as written,
// so Prometheus refuses the query rather than it silently meaning another.
func expand(expr string, values map[string]string) string {
	return variables.ReplaceAllStringFunc(expr, func(m string) string {
		name := strings.Trim(m, "${}")
		if v, ok := values[name]; ok {
			return v
		}
		return m
	})
}

// legendVars are legendFormat's {{label}} references.
var legendVars = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend is a series' name as Grafana writes it: legendFormat with
// {{label}} replaced by the series' label (empty when it has none), or
// without a legendFormat the series' labels, {a="b", ...}.
func legend(format string, labels map[string]string) string {
	if format == "" || format == "__auto" {
		var ks []string
		for k := range labels {
			if k != "__name__" {
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		var parts []string
		for _, k := range ks {
			parts = append(parts, k+"="+strconv.Quote(labels[k]))
		}
		return labels["__name__"] + "{" + strings.Join(parts, ", ") + "}"
	}
	return strings.TrimSpace(legendVars.ReplaceAllStringFunc(format, func(m string) string {
		return labels[legendVars.FindStringSubmatch(m)[1]]
	}))
}

// unit is how a panel's values are shown: scaled by factor, named name, with
// an SI prefix picked from the values' size when si is set.
type unit struct {
	name   string
	factor float64
	si     bool
}

// units are the Grafana units the dashboard uses.
var units = map[string]unit{
	"":            {"", 1, true},
	"none":        {"", 1, true},
	"short":       {"", 1, true},
	"bps":         {"bit/s", 1, true},
	"pps":         {"packets/s", 1, true},
	"ops":         {"ops/s", 1, true},
	"s":           {"seconds", 1, false},
	"percentunit": {"%", 100, false},
	"percent":     {"%", 1, false},
}

// prefix picks the SI prefix that keeps the largest magnitude below 1000.
func prefix(largest float64) (string, float64) {
	for _, p := range []struct {
		name string
		div  float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if largest >= p.div {
			return p.name, p.div
		}
	}
	return "", 1
}

// format writes a stat's value in its unit.
func (u unit) format(v float64) string {
	v *= u.factor
	div, p := 1.0, ""
	if u.si {
		p, div = prefix(math.Abs(v))
	}
	s := strconv.FormatFloat(v/div, 'f', -1, 64)
	if v/div != math.Trunc(v/div) {
		s = strconv.FormatFloat(v/div, 'g', 3, 64)
	}
	name := strings.TrimSpace(p + u.name)
	if name == "" {
		return s
	}
	if name == "%" {
		return s + "%"
	}
	return s + " " + name
}

// The colours are the HTML report's, Okabe and Ito's palette; markers tell
// series apart beside them, as in the report.
var (
	colors  = []string{"#0072b2", "#d55e00", "#009e73", "#e69f00", "#cc79a7", "#56b4e9", "#555555", "#000000"}
	markers = []struct {
		m    svgchart.Marker
		char string
	}{{svgchart.Circle, "●"}, {svgchart.Triangle, "△"}, {svgchart.Square, "□"}, {svgchart.Cross, "✕"},
		{svgchart.Ring, "○"}, {svgchart.Plus, "+"}, {svgchart.Box, "■"}, {svgchart.Pyramid, "▲"}}
	thresholdColors = map[string]string{"green": "#009e73", "red": "#d55e00", "orange": "#e69f00", "yellow": "#e69f00"}
)

const fonts = `system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif`

// view is one panel as the page shows it.
type view struct {
	Title string
	// X, W, Y, H place it on the page's grid (columns and rows from 1).
	X, W, Y, H int
	NoData     bool
	Errors     []string
	Chart      template.HTML
	Legend     []legendItem
	Stats      []stat
	Columns    []string
	Rows       [][]string
	Note       string
}

type legendItem struct{ Color, Char, Name string }

type stat struct {
	Name, Value, Color string
}

func run(base, dashPath, out string, span, step, rate time.Duration, instance string, width int) error {
	b, err := os.ReadFile(dashPath)
	if err != nil {
		return err
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("%s: %w", dashPath, err)
	}
	if len(d.Panels) == 0 {
		return fmt.Errorf("%s: no panels", dashPath)
	}
	c := &client{base: strings.TrimRight(base, "/"), http: http.Client{Timeout: 30 * time.Second}}
	end := time.Now().Truncate(time.Second)
	start := end.Add(-span)
	vars := map[string]string{
		"instance":        instance,
		"job":             ".+",
		"__rate_interval": promDuration(rate),
		"__interval":      promDuration(step),
		"__range":         promDuration(span),
	}
	sort.SliceStable(d.Panels, func(i, j int) bool {
		a, b := d.Panels[i].GridPos, d.Panels[j].GridPos
		return a.Y < b.Y || a.Y == b.Y && a.X < b.X
	})
	var views []view
	var failed []error
	for _, p := range d.Panels {
		v := view{
			Title: p.Title,
			X:     p.GridPos.X + 1, W: max(p.GridPos.W, 1),
			Y: p.GridPos.Y + 1, H: max(p.GridPos.H, 1),
		}
		chartW := float64(width-40)*float64(p.GridPos.W)/24 - 30
		// The panel's height less its title, padding and legend.
		chartH := float64(p.GridPos.H*rowHeight+(p.GridPos.H-1)*gridGap) - 95
		switch p.Type {
		case "timeseries", "graph":
			v, err = timeseries(c, p, v, vars, start, end, step, chartW, chartH)
		case "stat", "gauge":
			v, err = stats(c, p, v, vars, end)
		case "table":
			v, err = table(c, p, v, vars, end)
		default:
			v.Note = "panel type " + p.Type + " is not drawn here"
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("panel %q: %w", p.Title, err))
			v.Errors = append(v.Errors, err.Error())
		}
		views = append(views, v)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	err = page.Execute(f, map[string]any{
		"Title": d.Title, "Views": views, "Width": width, "RowHeight": rowHeight, "Gap": gridGap,
		"From": start.UTC().Format("2006-01-02 15:04:05"), "To": end.UTC().Format("15:04:05"),
		"Minutes": span.Minutes(), "Step": step, "Rate": promDuration(rate), "Prometheus": base,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// The page's height, for a screenshot's window: the grid's rows and
	// gaps under the heading.
	rows := 0
	for _, p := range d.Panels {
		rows = max(rows, p.GridPos.Y+p.GridPos.H)
	}
	fmt.Printf("%d,%d\n", width, headHeight+rows*(rowHeight+gridGap))
	return errors.Join(failed...)
}

// The page's layout in CSS pixels: a Grafana grid row, the gap between
// rows, and the heading above the grid with the page's margins.
const (
	rowHeight  = 36
	gridGap    = 8
	headHeight = 110
)

// promDuration writes d as PromQL does ("30s", "2m").
func promDuration(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Second)) + "s"
}

// timeseries draws a panel's queries over the range, one line per series,
// X in minutes before the end.
func timeseries(c *client, p panel, v view, vars map[string]string, start, end time.Time, step time.Duration, w, h float64) (view, error) {
	def := p.FieldConfig.Defaults
	u, ok := units[def.Unit]
	if !ok {
		u = unit{def.Unit, 1, false}
	}
	type line struct {
		name string
		pts  []svgchart.Point
	}
	var lines []line
	var errs []error
	largest := 0.0
	for _, t := range p.Targets {
		res, err := c.query(expand(t.Expr, vars), start, end, step)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range res {
			var pts []svgchart.Point
			for _, pair := range s.Values {
				ts, val, ok := sample(pair)
				if !ok {
					continue
				}
				val *= u.factor
				largest = max(largest, math.Abs(val))
				pts = append(pts, svgchart.Point{X: (ts - float64(end.Unix())) / 60, Y: val})
			}
			if len(pts) > 0 {
				lines = append(lines, line{legend(t.LegendFormat, s.Metric), pts})
			}
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].name < lines[j].name })
	fixed := def.Min != nil && def.Max != nil
	if fixed { // the axis' range picks the prefix, not the data inside it
		largest = max(math.Abs(*def.Min), math.Abs(*def.Max)) * u.factor
	}
	p1, div := "", 1.0
	if u.si {
		p1, div = prefix(largest)
	}
	ylabel := strings.TrimSpace(p1 + u.name)
	ch := svgchart.Chart{
		Title: p.Title, XLabel: "minutes before " + end.UTC().Format("15:04:05") + " UTC", YLabel: ylabel,
		Width: w, Height: h, FontFamily: fonts,
		X: svgchart.Axis{Min: -(end.Sub(start)).Minutes(), Max: 0},
	}
	if fixed {
		ch.Y = svgchart.Axis{Min: *def.Min * u.factor / div, Max: *def.Max * u.factor / div}
	}
	for i, l := range lines {
		col, mk := colors[i%len(colors)], markers[(i/len(colors)+i)%len(markers)]
		for k := range l.pts {
			l.pts[k].Y /= div
		}
		ch.Lines = append(ch.Lines, svgchart.Line{Points: l.pts, Color: col, Width: 1.5, Marker: mk.m, MarkerRadius: 2.5})
		v.Legend = append(v.Legend, legendItem{col, mk.char, l.name})
	}
	v.NoData = len(lines) == 0
	svg, err := ch.SVG()
	if err != nil {
		return v, err
	}
	v.Chart = template.HTML(svg) // svgchart escapes every text it writes
	return v, errors.Join(errs...)
}

// stats shows each series of a stat panel's queries at the end: its legend
// and value, coloured by the panel's thresholds.
func stats(c *client, p panel, v view, vars map[string]string, end time.Time) (view, error) {
	def := p.FieldConfig.Defaults
	u, ok := units[def.Unit]
	if !ok {
		u = unit{def.Unit, 1, false}
	}
	err := eachAtEnd(c, p, vars, end, func(legendFormat string, s series) {
		_, val, ok := sample(s.Value)
		if !ok {
			return
		}
		col := "#222222"
		for _, st := range def.Thresholds.Steps {
			if st.Value == nil || val >= *st.Value {
				if c, ok := thresholdColors[st.Color]; ok {
					col = c
				}
			}
		}
		v.Stats = append(v.Stats, stat{legend(legendFormat, s.Metric), u.format(val), col})
	})
	v.NoData = len(v.Stats) == 0
	return v, err
}

// eachAtEnd runs each of a panel's queries at end and hands every series it
// returns to f with its target's legend format; the queries that failed are
// joined into the error.
func eachAtEnd(c *client, p panel, vars map[string]string, end time.Time, f func(legendFormat string, s series)) error {
	var errs []error
	for _, t := range p.Targets {
		res, err := c.query(expand(t.Expr, vars), time.Time{}, end, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range res {
			f(t.LegendFormat, s)
		}
	}
	return errors.Join(errs...)
}

// table lists a table panel's series at the end, a column per label, as
// the dashboard's labelsToFields does; Time, Value, __name__ and job are
// left out as its organize step does.
func table(c *client, p panel, v view, vars map[string]string, end time.Time) (view, error) {
	var all []map[string]string
	cols := map[string]bool{}
	err := eachAtEnd(c, p, vars, end, func(_ string, s series) {
		all = append(all, s.Metric)
		for k := range s.Metric {
			if k != "__name__" && k != "job" {
				cols[k] = true
			}
		}
	})
	for k := range cols {
		v.Columns = append(v.Columns, k)
	}
	sort.Strings(v.Columns)
	if i := slices.Index(v.Columns, "instance"); i > 0 { // the host first
		v.Columns = append([]string{"instance"}, slices.Delete(v.Columns, i, i+1)...)
	}
	for _, m := range all {
		var row []string
		for _, k := range v.Columns {
			row = append(row, m[k])
		}
		v.Rows = append(v.Rows, row)
	}
	sort.Slice(v.Rows, func(i, j int) bool { return strings.Join(v.Rows[i], "\x00") < strings.Join(v.Rows[j], "\x00") })
	v.NoData = len(v.Rows) == 0
	return v, err
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{margin:0;padding:16px 20px;background:#f4f5f7;color:#222;font-family:` + fonts + `;width:{{.Width}}px;box-sizing:border-box}
h1{font-size:20px;margin:0 0 4px}
.sub{font-size:13px;color:#555;margin:0 0 12px}
.grid{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:{{.RowHeight}}px;gap:{{.Gap}}px}
.panel{background:#fff;border:1px solid #d8dbe0;border-radius:4px;padding:6px 10px;overflow:hidden;display:flex;flex-direction:column}
.panel h2{font-size:14px;margin:0 0 4px}
.nodata{flex:1;display:flex;align-items:center;justify-content:center;color:#777;font-size:16px}
.err{color:#d55e00;font-size:12px}
.stats{display:flex;gap:18px;flex-wrap:wrap;align-items:baseline}
.stat b{display:block;font-size:30px}
.stat span{font-size:12px;color:#555}
.legend{font-size:12px;margin:2px 0 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:2px 14px}
table{border-collapse:collapse;font-size:12px}
th,td{text-align:left;padding:2px 10px 2px 0;border-bottom:1px solid #eee;white-space:nowrap}
.note{font-size:12px;color:#555}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="sub">Rendered by wgperf's own chart renderer (scripts/dashboard-shot.sh) from the dashboard's queries against Prometheus {{.Prometheus}}, {{.From}}–{{.To}} UTC, every {{.Step}}, $__rate_interval = {{.Rate}}, all instances. Not a Grafana screenshot.</p>
<div class="grid">
{{range .Views}}<section class="panel" style="grid-column:{{.X}} / span {{.W}};grid-row:{{.Y}} / span {{.H}}"><h2>{{.Title}}</h2>
{{range .Errors}}<p class="err">{{.}}</p>{{end}}
{{if .NoData}}<div class="nodata">no data</div>{{end}}
{{if .Stats}}<div class="stats">{{range .Stats}}<div class="stat"><b style="color:{{.Color}}">{{.Value}}</b><span>{{.Name}}</span></div>{{end}}</div>{{end}}
{{if .Rows}}<table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
{{if and .Chart (not .NoData)}}{{.Chart}}<ul class="legend">{{range .Legend}}<li><span style="color:{{.Color}}">{{.Char}}</span> {{.Name}}</li>{{end}}</ul>{{end}}
{{with .Note}}<p class="note">{{.}}</p>{{end}}
</section>
{{end}}</div></body></html>
`))
