package exporter

import (
	"context"
	"html"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
)

// Site is what "wgperf exporter" serves: /metrics (the watched host, the
// exporter's health and its process), /probe?target= (other hosts, through
// the Prober), /sd (an inventory's /probe targets for Prometheus' HTTP
// service discovery) and a landing page at /. Both servers, net/http's and the
// router build's small one, answer through Site.answer; the full build's
// answers /metrics and / through Prometheus' libraries instead (metrics_lib.go).
type Site struct {
	Exporter    *Exporter
	Prober      *Prober      // nil: /probe is not found
	Discovery   *Discovery   // nil: /sd is not found; it lists what Prober admits
	Landing     *LandingPage // nil: / is not found
	MetricsPath string       // where the metrics are (--web.telemetry-path); "" means /metrics
	// MaxConnections bounds the connections served at once
	// (--web.max-connections); 0 means DefaultMaxConnections.
	MaxConnections int
	// WriteTimeout is how long a client has to take an answer; 0 means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration

	lib libSite // the full build's handlers, the router build's landing page, made at the first request
}

// LandingPage is what / shows: what the exporter watches and its pages, and
// a form for /probe when the Site has a Prober. Its texts are plain text.
type LandingPage struct {
	Description string // what is watched, how often
	Version     string
	Links       []LandingLink
}

// LandingLink is one of the exporter's pages on the LandingPage.
type LandingLink struct {
	Address     string // a path of the exporter: "/metrics"
	Text        string
	Description string
}

// probeTargetHint is the /probe form's placeholder.
const probeTargetHint = "ssh:[user@]host[:port]"

// html is the page as the router build serves it (the full build's comes
// from exporter-toolkit).
func (l *LandingPage) html(withProbe bool) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<html><head><title>wgperf exporter</title></head><body><h1>wgperf exporter</h1>\n<p>" + e(l.Description) + "</p>\n")
	if l.Version != "" {
		b.WriteString("<p>Version: " + e(l.Version) + "</p>\n")
	}
	b.WriteString("<ul>\n")
	for _, k := range l.Links {
		b.WriteString(`<li><a href="` + e(k.Address) + `">` + e(k.Text) + "</a>")
		if k.Description != "" {
			b.WriteString(": " + e(k.Description))
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
	if withProbe {
		b.WriteString(`<form action="/probe"><label>Target:</label> <input type="text" name="target" placeholder="` +
			e(probeTargetHint) + `"> <input type="submit" value="Probe"></form>` + "\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// request is what the exporter's pages read from an HTTP request.
type request struct {
	method, path  string
	query         url.Values
	scrapeTimeout string // X-Prometheus-Scrape-Timeout-Seconds
}

// reply is a page's answer; the server adds the transport's headers. The
// metrics pages answer with parts, the families' rendered text written one
// after the other straight to the client: ten scrapes of one cached target
// share one text instead of holding ten copies.
type reply struct {
	status      int
	contentType string
	body        []byte
	parts       []family // after body
}

// size is the length of the answer's body.
func (r reply) size() int {
	n := len(r.body)
	for _, f := range r.parts {
		n += len(f.text)
	}
	return n
}

// writeTo writes the answer's body to w.
func (r reply) writeTo(w io.Writer) error {
	if len(r.body) > 0 {
		if _, err := w.Write(r.body); err != nil {
			return err
		}
	}
	for _, f := range r.parts {
		if _, err := w.Write(f.text); err != nil {
			return err
		}
	}
	return nil
}

// The HTTP status codes the exporter answers with.
const (
	statusOK               = 200
	statusBadRequest       = 400
	statusForbidden        = 403
	statusNotFound         = 404
	statusMethodNotAllowed = 405
	statusInternalError    = 500
	statusUnavailable      = 503
)

// statusText names the status codes above.
var statusText = map[int]string{
	statusOK: "OK", statusBadRequest: "Bad Request", statusForbidden: "Forbidden", statusNotFound: "Not Found",
	statusMethodNotAllowed: "Method Not Allowed", statusInternalError: "Internal Server Error", statusUnavailable: "Service Unavailable",
}

// textReply is an error (or any plain message) as net/http's http.Error writes it.
func textReply(status int, msg string) reply {
	return reply{status: status, contentType: "text/plain; charset=utf-8", body: []byte(msg + "\n")}
}

// answer routes one request.
func (s *Site) answer(ctx context.Context, req request) reply {
	if req.method != "GET" && req.method != "HEAD" {
		return textReply(statusMethodNotAllowed, "method not allowed: the exporter answers GET and HEAD")
	}
	switch {
	case req.path == s.metricsPath() && s.Exporter != nil:
		parts, err := s.Exporter.metricsParts(append(processMetrics(), s.ownMetrics()...)...)
		if err != nil {
			return textReply(statusInternalError, err.Error())
		}
		return reply{status: statusOK, contentType: contentType, parts: parts}
	case req.path == "/probe" && s.Prober != nil:
		return s.Prober.answer(ctx, req.query, req.scrapeTimeout)
	case req.path == SDPath && s.Discovery != nil:
		return s.Discovery.answer(ctx, s.Prober)
	case req.path == "/" && s.Landing != nil:
		return reply{status: statusOK, contentType: "text/html; charset=utf-8", body: s.landingHTML()}
	}
	return textReply(statusNotFound, "404 page not found")
}

// ownMetrics are the samples of /metrics gathered at a scrape, beside the
// host's and the process's: the exporter's health, its build, the /probe
// counters and the kernel's drops.
func (s *Site) ownMetrics() []metric {
	out := append(s.Exporter.selfMetrics(), buildInfo(s.Exporter.opts.Version))
	if s.Prober != nil {
		out = append(out, s.Prober.metrics()...)
	}
	return append(out, dropMetrics(context.Background(), s.Exporter.opts.Drops)...)
}

// SDPath is where the exporter serves an inventory's targets for Prometheus'
// HTTP service discovery (Site.Discovery).
const SDPath = "/sd"

func (s *Site) metricsPath() string {
	if s.MetricsPath == "" {
		return "/metrics"
	}
	return s.MetricsPath
}

// serveAll runs serve on every listener; the first to fail stops the others,
// and its error is returned once all have returned.
func serveAll(ctx context.Context, lns []net.Listener, serve func(context.Context, net.Listener) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errs <- serve(ctx, ln) }()
	}
	var first error
	for range lns {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// Exposed reports whether a listener accepts connections from other hosts
// (anything but a loopback address).
func Exposed(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return !ok || !a.IP.IsLoopback()
}
