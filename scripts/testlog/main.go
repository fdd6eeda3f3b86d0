// Command testlog turns "go test -json" into go test's own terse output and
// keeps how long each test took, so scripts/test.sh can show where a slow
// suite spends its time: a test's lines are printed only when it fails,
// each package's "ok"/"FAIL" line always, and every test or subtest that took
// a second or more is appended to the -times file as "seconds<TAB>package
// test".
//
// Usage: testlog -times FILE go test -json ./...
//
// It runs the command, relays its output so, and exits with its status.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// minSeconds is the shortest test the times file keeps: the suite's time is
// in its lab tests, which take seconds each.
const minSeconds = 1.0

func main() {
	times := flag.String("times", "", "append each test's seconds to this file")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testlog [-times FILE] go test -json [packages]")
		os.Exit(2)
	}
	var tw io.Writer = io.Discard
	if *times != "" {
		f, err := os.OpenFile(*times, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testlog:", err)
			os.Exit(2)
		}
		defer f.Close()
		tw = f
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stream, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	// A lane stopped by scripts/test.sh's trap stops its tests too.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() { _ = cmd.Process.Signal(<-stop) }()
	if err := relay(stream, os.Stdout, tw); err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		_, _ = io.Copy(io.Discard, stream) // let the tests finish
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
}

// relay reads test2json events from in and writes what a plain "go test"
// would show to out, and the tests' times to times.
func relay(in io.Reader, out, times io.Writer) error {
	held := map[string][]string{} // a running test's output, printed if it fails
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			fmt.Fprintln(out, line) // go's own words outside the stream
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "output" || e.Action == "build-output":
			if e.Test == "" {
				if e.Output != "PASS\n" {
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			if !isMarker(e.Output) {
				held[key] = append(held[key], e.Output)
			}
		case e.Test == "":
			continue
		case e.Action == "fail":
			fmt.Fprint(out, strings.Join(held[key], ""))
			fallthrough
		case e.Action == "pass" || e.Action == "skip":
			delete(held, key)
			if e.Elapsed >= minSeconds {
				fmt.Fprintf(times, "%.1f\t%s %s\n", e.Elapsed, e.Package, e.Test)
			}
		}
	}
	// A test still running when the stream ended (a panic, a timeout) says
	// why in its own output.
	for _, lines := range held {
		fmt.Fprint(out, strings.Join(lines, ""))
	}
	return sc.Err()
}

// isMarker reports the lines -v adds around each test, which go test
// without -v leaves out.
func isMarker(s string) bool {
	for _, m := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(s, m) {
			return true
		}
	}
	return false
}
