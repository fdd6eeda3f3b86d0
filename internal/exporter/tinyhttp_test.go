package exporter

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// startTiny serves s with the router build's small server on a loopback
// port and returns its base URL; it stops when the test ends, and must
// return nil then.
func startTiny(t testing.TB, s *Site) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveTiny(ctx, ln, s, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serveTiny: %v", err)
			}
		case <-time.After(tinyDrainTimeout + time.Second):
			t.Error("serveTiny did not stop")
		}
	})
	return "http://" + ln.Addr().String()
}

// rawExchange sends raw bytes to the server at base and returns its answer.
func rawExchange(t *testing.T, base, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite() // what was sent is all there is
	b, _ := io.ReadAll(bufio.NewReader(c))
	return string(b)
}

// The small server answers a Go client, Prometheus' own, like net/http does:
// the metrics with their content type, the landing page, 404s and 405s, and
// HEAD without a body; each request on its own connection.
func TestTinyServerAnswersScrapes(t *testing.T) {
	e := New(target.Local(), Options{Version: "v9"})
	base := startTiny(t, &Site{Exporter: e, Prober: NewProber(ProbeOptions{}), Landing: &LandingPage{Description: "hi"}})
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != contentType ||
		!strings.Contains(string(body), `wgperf_build_info{branch=`) || resp.ContentLength != int64(len(body)) {
		t.Errorf("GET /metrics: %s %q, %d bytes (Content-Length %d):\n%s", resp.Status, resp.Header.Get("Content-Type"), len(body), resp.ContentLength, body)
	}
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/", 200, "<p>hi</p>"},
		{"GET", "/nothing", 404, "404 page not found\n"},
		{"POST", "/metrics", 405, "method not allowed"},
		{"HEAD", "/metrics", 200, ""},
		{"GET", "/probe?target=ssh:root@r1", 403, "not allowed"},
		{"GET", "/probe", 400, "target parameter missing"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) || tc.body == "" && len(b) != 0 {
			t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, resp.StatusCode, b, tc.code, tc.body)
		}
	}
}

// Requests a scraper would never send get a 400 (or 505), and the server
// keeps serving.
func TestTinyServerRefusesMalformedRequests(t *testing.T) {
	base := startTiny(t, &Site{Landing: &LandingPage{Description: "ok"}})
	for raw, want := range map[string]string{
		"GET /\r\n\r\n":                      "HTTP/1.1 400 Bad Request\r\n",
		"GET / HTTP/2.0\r\n\r\n":             "HTTP/1.1 505 ",
		"GET /%zz HTTP/1.1\r\n\r\n":          "HTTP/1.1 400 Bad Request\r\n",
		"GET / HTTP/1.1\r\nno colon\r\n\r\n": "HTTP/1.1 400 Bad Request\r\n",
		"GET / HTTP/1.1\r\nX: " + strings.Repeat("a", tinyMaxHeader) + "\r\n\r\n": "HTTP/1.1 400 Bad Request\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n":                                           "HTTP/1.1 400 Bad Request\r\n", // cut short
		"GET / HTTP/1.0\r\n\r\n":                                                  "HTTP/1.1 200 OK\r\n",
		"GET http://x/ HTTP/1.1\r\n\r\n":                                          "HTTP/1.1 200 OK\r\n",
	} {
		if got := rawExchange(t, base, raw); !strings.HasPrefix(got, want) {
			t.Errorf("%.40q: answered %.60q, want %q", raw, got, want)
		}
	}
	// A client that connects and sends nothing is dropped at the read timeout
	// without holding up others.
	idle, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if got := rawExchange(t, base, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(got, "<p>ok</p>") {
		t.Errorf("answer beside an idle connection: %q", got)
	}
}

// Prometheus' scrape timeout header reaches the Prober.
func TestTinyServerPassesScrapeTimeout(t *testing.T) {
	gate := make(chan struct{}) // never opened: the collection hangs
	p, _, _ := fakeProber(t, ProbeOptions{Allow: []string{"ssh:*"}, Timeout: time.Minute}, nil, gate)
	base := startTiny(t, &Site{Prober: p})
	start := time.Now()
	got := rawExchange(t, base, "GET /probe?target=ssh:root@slow HTTP/1.1\r\nx-prometheus-scrape-timeout-seconds: 1\r\n\r\n")
	if took := time.Since(start); took > 1500*time.Millisecond || !strings.Contains(got, "wgperf_collect_success 0\n") {
		t.Errorf("answered after %s:\n%s", took, got)
	}
}

func TestExposed(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:0": false, "[::1]:0": false, "0.0.0.0:0": true} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		if got := Exposed(ln); got != want {
			t.Errorf("Exposed(%s) = %v, want %v", addr, got, want)
		}
		ln.Close()
	}
}
