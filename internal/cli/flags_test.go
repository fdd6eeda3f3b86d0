package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestTimeFlags: time flags take Go durations like every other, and a bare
// number in their unit as before; renamed flags keep their old spelling.
func TestTimeFlags(t *testing.T) {
	var secs, ms int
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	SecondsFlag(f, &secs, "time", 3, "")
	UnitFlag(f, &ms, "delay", 0, time.Millisecond, "")
	f.StringVar(new(string), "server", "", "")
	AliasFlag(f, "peer", "server")
	for _, tc := range []struct {
		args       []string
		secs, ms   int
		wantErr    bool
		serverWant string
	}{
		{[]string{"--time", "10s"}, 10, 0, false, ""},
		{[]string{"--time", "10"}, 10, 0, false, ""},
		{[]string{"--time", "1m"}, 60, 0, false, ""},
		{[]string{"--time", "1500ms"}, 2, 0, false, ""},
		{[]string{"--delay", "10"}, 3, 10, false, ""},
		{[]string{"--delay", "6ms"}, 3, 6, false, ""},
		{[]string{"--time", "soon"}, 0, 0, true, ""},
		{[]string{"--time", "-5s"}, 0, 0, true, ""},
		{[]string{"--peer", "ssh:m42"}, 3, 0, false, "ssh:m42"},
	} {
		secs, ms = 3, 0
		_ = f.Set("server", "")
		err := f.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: err %v", tc.args, err)
			continue
		}
		if tc.wantErr {
			continue
		}
		if secs != tc.secs || ms != tc.ms || f.Lookup("server").Value.String() != tc.serverWant {
			t.Errorf("%v: time %d s, delay %d ms, server %q", tc.args, secs, ms, f.Lookup("server").Value.String())
		}
	}
}
