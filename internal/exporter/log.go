package exporter

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Logger writes the exporter's log as the official exporters do
// (--log.level, --log.format): one line per event with its time, level and
// message, in logfmt or JSON. A message quoting a host's text cannot hold a
// raw control character: both formats escape them.
type Logger struct {
	mu    sync.Mutex
	w     io.Writer
	level int
	json  bool
	now   func() time.Time
}

// LogLevels and LogFormats are what --log.level and --log.format take.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"logfmt", "json"}
)

// NewLogger returns a Logger writing to w events at level and above.
func NewLogger(w io.Writer, level, format string) (*Logger, error) {
	l := &Logger{w: w, level: -1, now: time.Now}
	for i, name := range LogLevels {
		if name == level {
			l.level = i
		}
	}
	if l.level < 0 {
		return nil, fmt.Errorf("--log.level %q: want one of %s", level, strings.Join(LogLevels, ", "))
	}
	switch format {
	case "logfmt":
	case "json":
		l.json = true
	default:
		return nil, fmt.Errorf("--log.format %q: want one of %s", format, strings.Join(LogFormats, ", "))
	}
	return l, nil
}

// Debugf, Infof, Warnf and Errorf log a message at their level.
func (l *Logger) Debugf(format string, args ...any) { l.log(0, format, args...) }
func (l *Logger) Infof(format string, args ...any)  { l.log(1, format, args...) }
func (l *Logger) Warnf(format string, args ...any)  { l.log(2, format, args...) }
func (l *Logger) Errorf(format string, args ...any) { l.log(3, format, args...) }

func (l *Logger) log(level int, format string, args ...any) {
	if l == nil || level < l.level {
		return
	}
	msg := fmt.Sprintf(format, args...)
	at := l.now().UTC().Format(time.RFC3339Nano)
	var line string
	if l.json {
		b, _ := json.Marshal(struct {
			Time  string `json:"time"`
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}{at, LogLevels[level], msg})
		line = string(b)
	} else {
		line = "time=" + at + " level=" + LogLevels[level] + " msg=" + strconv.Quote(msg)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, line)
}
