package collect

import (
	"strconv"
	"strings"
)

// nicSource is each device's negotiated link speed and duplex (sysfs), the
// ceiling of what its link carries. Virtual devices answer "Invalid argument"
// or -1 and are left without.
var nicSource = source{
	batch:    networkBatch,
	globs:    []string{"/sys/class/net/*/speed", "/sys/class/net/*/duplex"},
	assemble: (*collector).nics,
}

func (c *collector) nics(files map[string]*fileRead) {
	for i := range c.snap.Links {
		l := &c.snap.Links[i]
		dir := "/sys/class/net/" + l.Name + "/"
		if f, ok := files[dir+"speed"]; ok && f.Err == "" {
			if n, err := strconv.Atoi(strings.TrimSpace(f.Content)); err == nil && n > 0 {
				l.SpeedMbit = n
			}
		}
		if f, ok := files[dir+"duplex"]; ok && f.Err == "" && l.SpeedMbit > 0 {
			if d := strings.TrimSpace(f.Content); d == "full" || d == "half" {
				l.Duplex = d
			}
		}
	}
}
