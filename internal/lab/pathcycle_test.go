package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The loop that cycles the path, run by sh against stand-ins for ip (the
// flag: a file) and tc (a log of the rates it sets): it alternates low and
// high on both of R's links, and once the flag goes it puts the full rate
// back and ends, within a second and without another low phase.
func TestPathCycleLoop(t *testing.T) {
	dir := t.TempDir()
	flag, tcLog := filepath.Join(dir, "flag"), filepath.Join(dir, "tc.log")
	stub := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub("ip", `[ -e "`+flag+`" ]`)
	stub("tc", `echo "$4 $8" >> "`+tcLog+`"`) // device, rate
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", pathCycleScript(200, 80, 2))
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(2500 * time.Millisecond) // low for 1 s, high for 1 s, low again
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the loop ended with %v", err)
		}
	case <-time.After(1500 * time.Millisecond):
		_ = cmd.Process.Kill()
		t.Fatal("the loop still runs more than a second after its flag went")
	}
	b, err := os.ReadFile(tcLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"eth-a 80mbit", "eth-b 80mbit", "eth-a 200mbit", "eth-b 200mbit", "eth-a 80mbit", "eth-b 80mbit"}
	if len(lines) < len(want)+2 || strings.Join(lines[:len(want)], "|") != strings.Join(want, "|") {
		t.Fatalf("rates set %q, want %q then the full rate", lines, want)
	}
	if last := lines[len(lines)-2:]; strings.Join(last, "|") != "eth-a 200mbit|eth-b 200mbit" {
		t.Errorf("the loop ended with %q, want the full rate on both links", last)
	}
}

func TestPathCycleLow(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want int
	}{
		{Config{Underlay: Shape{RateMbit: 200}, PathCycleSeconds: 18}, 80},
		{Config{Underlay: Shape{RateMbit: 137}, PathCycleSeconds: 18}, 54}, // a sized rate keeps the share
		{Config{Underlay: Shape{RateMbit: 200}, PathCycleSeconds: 18, PathCycleLowPct: 25}, 50},
	} {
		if got := tc.cfg.PathCycleLowMbit(); got != tc.want {
			t.Errorf("%+v: low %d, want %d", tc.cfg, got, tc.want)
		}
	}
}
