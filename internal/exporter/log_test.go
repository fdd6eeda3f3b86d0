package exporter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func testLogger(t *testing.T, level, format string) (*Logger, *strings.Builder) {
	t.Helper()
	var b strings.Builder
	l, err := NewLogger(&b, level, format)
	if err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return time.Date(2026, 11, 22, 0, 36, 16, 429_000_000, time.UTC) }
	return l, &b
}

// The exporter logs as node_exporter does: a fixed message and what varies
// as key=value pairs (quoted where slog quotes, a host's control characters
// escaped) or JSON fields, numbers and booleans as themselves.
func TestLoggerStructured(t *testing.T) {
	l, b := testLogger(t, "info", "logfmt")
	l.Debug("collecting", "target", "local")
	l.Info("serving metrics", "address", "[::]:9723", "interval", 30*time.Second, "tls_auth", "none")
	l.Error("collecting failed", "err", errors.New("ssh:golem: exit 255\n\x1b[2Jgone"), "peers", 3, "odd")
	want := `time=2026-11-22T00:36:16.429Z level=INFO msg="serving metrics" address=[::]:9723 interval=30s tls_auth=none
time=2026-11-22T00:36:16.429Z level=ERROR msg="collecting failed" err="ssh:golem: exit 255\n\x1b[2Jgone" peers=3 !BADKEY=odd
`
	if b.String() != want {
		t.Errorf("logfmt:\n%s\nwant:\n%s", b.String(), want)
	}

	l, b = testLogger(t, "debug", "json")
	l.Debug("collecting", "target", "local")
	l.Warn("serving without TLS", "address", "0.0.0.0:9723", "tls", false, "port", 9723)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("json: %d lines:\n%s", len(lines), b.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatalf("%v: %s", err, lines[1])
	}
	if got["level"] != "WARN" || got["msg"] != "serving without TLS" || got["address"] != "0.0.0.0:9723" ||
		got["tls"] != false || got["port"] != float64(9723) || got["time"] != "2026-11-22T00:36:16.429Z" {
		t.Errorf("json line %s", lines[1])
	}
	if !strings.HasPrefix(lines[0], `{"time":"2026-11-22T00:36:16.429Z","level":"DEBUG","msg":"collecting","target":"local"}`) {
		t.Errorf("json line %s: time, level, msg first", lines[0])
	}

	var nilLogger *Logger
	nilLogger.Info("nowhere", "k", "v")
	nilLogger.Errors("x")("%d", 1)
	l, b = testLogger(t, "info", "logfmt")
	l.Errors("/probe collecting failed")("probe %s: %v", "ssh:golem", errors.New("timeout"))
	if !strings.Contains(b.String(), `level=ERROR msg="/probe collecting failed" err="probe ssh:golem: timeout"`) {
		t.Errorf("Errors: %s", b.String())
	}
}
