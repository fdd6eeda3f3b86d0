package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/exporter"
)

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startExporter runs "wgperf exporter args..." (through sh when wrap is set,
// for socket activation) and returns its standard error as it comes.
func startExporter(t *testing.T, extra []*os.File, env []string, argv ...string) *bufio.Scanner {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "WGPERF_TEST_MAIN=1"), env...)
	cmd.ExtraFiles = extra
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return bufio.NewScanner(stderr)
}

// scrape GETs url until the exporter answers (it collects before it serves).
func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	t.Fatalf("%s: no answer within 30 s", url)
	return 0, ""
}

// The exporter takes node_exporter's (exporter-toolkit's) web and log flags,
// which Ansible roles, NixOS modules and compose files template.
func TestExporterAcceptsNodeExporterFlags(t *testing.T) {
	a, b := freeAddr(t), freeAddr(t)
	log := startExporter(t, nil, nil, os.Args[0], "exporter", "--web.listen-address", a, "--listen", b,
		"--web.telemetry-path", "/wg", "--log.level", "debug", "--log.format", "json", "--interval", "1m")
	for _, addr := range []string{a, b} {
		if code, body := scrape(t, "http://"+addr+"/wg"); code != http.StatusOK || !strings.Contains(body, "wgperf_build_info{") {
			t.Errorf("%s/wg: HTTP %d:\n%.300s", addr, code, body)
		}
	}
	if code, _ := scrape(t, "http://"+a+"/metrics"); code != http.StatusNotFound {
		t.Errorf("/metrics answered %d with --web.telemetry-path /wg, want 404", code)
	}
	// Structured lines as node_exporter's: a fixed message and its values as
	// fields, wgperf's own and exporter-toolkit's alike (not its line
	// re-printed inside msg). The router build serves with its own small
	// server, so exporter-toolkit's two lines are the full build's only.
	want := map[string]string{"Starting wgperf exporter": "version", "serving metrics": "path"}
	if exporter.WebConfig {
		want["Listening on"], want["TLS is disabled."] = "address", "address"
	}
	levels, msgs := map[string]bool{}, map[string]map[string]any{}
	lines := make(chan []byte, 64)
	go func() {
		for log.Scan() {
			lines <- bytes.Clone(log.Bytes())
		}
		close(lines)
	}()
	seen := func() bool {
		for msg := range want {
			if msgs[msg] == nil {
				return false
			}
		}
		return levels["DEBUG"]
	}
	// The exporter keeps running: stop reading at the lines wanted, or after 10 s.
	for deadline := time.After(10 * time.Second); !seen(); {
		var b []byte
		var open bool
		select {
		case b, open = <-lines:
		case <-deadline:
		}
		if !open {
			break
		}
		var line map[string]any
		if err := json.Unmarshal(b, &line); err != nil || line["time"] == nil || line["msg"] == nil {
			t.Fatalf("--log.format json wrote %q (%v)", b, err)
		}
		level, _ := line["level"].(string)
		msg, _ := line["msg"].(string)
		levels[level] = true
		msgs[msg] = line
	}
	if !levels["DEBUG"] || !levels["INFO"] {
		t.Errorf("--log.level debug logged levels %v, want DEBUG and INFO", levels)
	}
	for msg, field := range want {
		if line, ok := msgs[msg]; !ok || line[field] == nil {
			t.Errorf("no line %q with its %s as a field; lines: %v", msg, field, msgs)
		}
	}

	// A systemd .socket unit hands the listening socket over as descriptor 3.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	defer f.Close()
	// LISTEN_PID must name the exporter: the shell's pid, which exec keeps.
	log = startExporter(t, []*os.File{f}, []string{"LISTEN_FDS=1"}, "sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`,
		os.Args[0], "exporter", "--web.systemd-socket", "--interval", "1m")
	if code, body := scrape(t, "http://"+addr+"/metrics"); code != http.StatusOK || !strings.Contains(body, "wgperf_build_info{") {
		t.Errorf("--web.systemd-socket: HTTP %d:\n%.300s", code, body)
	}
	if log.Scan() && (!strings.HasPrefix(log.Text(), "time=") || !strings.Contains(log.Text(), ` level=INFO msg="Starting wgperf exporter" version=`)) {
		t.Errorf("logfmt line %q", log.Text())
	}

	for _, bad := range [][]string{{"--log.level", "loud"}, {"--log.format", "xml"}, {"--web.telemetry-path", "metrics"}} {
		code, stderr := wgperf(t, nil, append([]string{"exporter"}, bad...)...)
		if code != exitFailed || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("exporter %v: exit %d, %q; want 3 and one line naming the flag", bad, code, stderr)
		}
	}
}

// Started with --inventory, the exporter serves at /sd the target groups
// "wgperf inventory --prometheus" prints for the same inventory, less the
// targets --probe.allow does not admit, as Prometheus' http_sd reads them.
func TestExporterServesInventoryAtSD(t *testing.T) {
	inv := t.TempDir() + "/hosts.ini"
	if err := os.WriteFile(inv, []byte("[routers]\ngw1 ansible_host=198.51.100.10 ansible_user=root\ngw2 ansible_host=198.51.100.11 ansible_user=root ansible_port=2222\n[others]\nnas ansible_host=192.0.2.7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"inventory", "--inventory", inv, "--prometheus"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("inventory --prometheus: exit %d: %s", code, stderr.String())
	}
	var fileSD []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &fileSD); err != nil || len(fileSD) != 3 {
		t.Fatalf("inventory --prometheus printed %s (%v), want 3 groups", stdout.String(), err)
	}

	addr := freeAddr(t)
	log := startExporter(t, nil, nil, os.Args[0], "exporter", "--web.listen-address", addr, "--interval", "1m",
		"--inventory", inv, "--probe.allow", "ssh:root@198.51.100.0/24")
	code, body := scrape(t, "http://"+addr+"/sd")
	var sd []map[string]any
	if err := json.Unmarshal([]byte(body), &sd); code != http.StatusOK || err != nil {
		t.Fatalf("/sd: HTTP %d (%v): %s", code, err, body)
	}
	if want := fileSD[:2]; !reflect.DeepEqual(sd, want) {
		t.Errorf("/sd served %s, want the routers of inventory --prometheus: %v", body, want)
	}
	// The exporter keeps running: read its lines aside, and stop waiting after 10 s.
	warned := make(chan bool, 1)
	go func() {
		for log.Scan() {
			if strings.Contains(log.Text(), "--probe.allow does not admit") && strings.Contains(log.Text(), "ssh:192.0.2.7") {
				warned <- true
				return
			}
		}
	}()
	select {
	case <-warned:
	case <-time.After(10 * time.Second):
		t.Error("the exporter did not log the inventory's target it leaves out of /sd")
	}

	empty := t.TempDir() + "/empty.ini"
	if err := os.WriteFile(empty, []byte("# no hosts yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr = freeAddr(t)
	startExporter(t, nil, nil, os.Args[0], "exporter", "--web.listen-address", addr, "--interval", "1m",
		"--inventory", empty, "--probe.allow", "ssh:*")
	if code, body := scrape(t, "http://"+addr+"/sd"); code != http.StatusOK || body != "[]\n" {
		t.Errorf("/sd of an inventory without hosts: HTTP %d %q, want 200 []", code, body)
	}

	for _, bad := range [][]string{{"--limit", "routers"}, {"--inventory", inv + ".missing"}, {"--web.telemetry-path", "/sd"}} {
		code, stderr := wgperf(t, nil, append([]string{"exporter", "--web.listen-address", freeAddr(t)}, bad...)...)
		if code != exitFailed || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("exporter %v: exit %d, %q; want 3 and one line naming the flag", bad, code, stderr)
		}
	}
}

// TestExporterSSHPersistBadValue: a --probe.ssh-persist under a second (ssh's
// ControlPersist counts seconds, and 0 there would mean forever) is one
// clear line and exit 3, before anything is served.
func TestExporterSSHPersistBadValue(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"exporter", "--probe.ssh-persist", "500ms", "--web.listen-address", freeAddr(t)}, &out, &errOut)
	if code != exitFailed || !strings.Contains(errOut.String(), "--probe.ssh-persist 500ms: want 0 (a connection per collection) or 1s or more") ||
		strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
