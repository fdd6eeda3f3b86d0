package collect

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// addCorpus seeds a fuzz test with every recorded file matching the globs.
func addCorpus(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		files, err := filepath.Glob(testdata(g))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

func FuzzParseSNMP(f *testing.F) {
	addCorpus(f, "proc/snmp*", "proc/netstat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseSNMP(bytes.NewReader(b))
		if err == nil && len(m) == 0 {
			t.Error("no error but no counters")
		}
	})
}

func FuzzParseSoftnet(f *testing.F) {
	addCorpus(f, "proc/softnet_stat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseSoftnet(bytes.NewReader(b))
		if err == nil && len(rows) == 0 {
			t.Error("no error but no rows")
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	addCorpus(f, "proc/stat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		cpus, err := ParseProcStat(bytes.NewReader(b))
		if err == nil && len(cpus) == 0 {
			t.Error("no error but no cpus")
		}
	})
}

func FuzzParseWGDump(f *testing.F) {
	addCorpus(f, "wg/dump*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ifaces, err := ParseWGDump(bytes.NewReader(b))
		if err != nil {
			return
		}
		if lines := bytes.Count(b, []byte("\n")) + 1; len(ifaces) > lines {
			t.Errorf("%d interfaces from %d lines", len(ifaces), lines)
		}
	})
}
