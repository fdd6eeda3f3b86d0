package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseContextSwitches reads the "ctxt N" line of /proc/stat: the context
// switches of every CPU since boot. The remote users case saw them go from
// about 12K/s idle to 88-131K/s during a transfer.
func ParseContextSwitches(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "ctxt ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat ctxt: bad number %q", rest)
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("/proc/stat: %w", err)
	}
	return 0, fmt.Errorf("/proc/stat: no ctxt line")
}
