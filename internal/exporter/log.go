package exporter

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Logger writes the exporter's log as node_exporter does (promslog over
// log/slog, --log.level, --log.format): one line per event, its time, level
// and a fixed message, then what varies as key=value pairs (logfmt, slog's
// TextHandler) or fields of one JSON object (slog's JSONHandler).
// exporter-toolkit's lines come through the same Logger (Handler, in the
// full build), so both read alike. It writes the lines itself rather than
// through log/slog, which the router build leaves out (65 KB of flash). A
// value quoting a host's text cannot hold a raw control character: both
// formats escape them. A nil Logger logs nothing.
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

// Levels as slog names them in a line.
const (
	levelDebug = iota
	levelInfo
	levelWarn
	levelError
)

var levelNames = [...]string{"DEBUG", "INFO", "WARN", "ERROR"}

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

// Debug, Info, Warn and Error log msg at their level with args, alternating
// keys and values as slog takes them: log.Info("listening", "address", addr).
func (l *Logger) Debug(msg string, args ...any) { l.log(levelDebug, msg, args) }
func (l *Logger) Info(msg string, args ...any)  { l.log(levelInfo, msg, args) }
func (l *Logger) Warn(msg string, args ...any)  { l.log(levelWarn, msg, args) }
func (l *Logger) Error(msg string, args ...any) { l.log(levelError, msg, args) }

// Errors returns a printf-style func (Options.Logf, ProbeOptions.Logf) that
// logs msg at level error, with what it is given as err.
func (l *Logger) Errors(msg string) func(format string, args ...any) {
	return func(format string, args ...any) { l.Error(msg, "err", fmt.Sprintf(format, args...)) }
}

func (l *Logger) enabled(level int) bool { return l != nil && level >= l.level }

// attr is one key=value of a line.
type attr struct {
	key string
	val any
}

// attrs pairs slog-style arguments; a key without a value, or a value where
// a key should be, is logged under !BADKEY as slog does.
func attrs(args []any) []attr {
	var out []attr
	for len(args) > 0 {
		key, ok := args[0].(string)
		if !ok || len(args) == 1 {
			out = append(out, attr{"!BADKEY", args[0]})
			args = args[1:]
			continue
		}
		out = append(out, attr{key, args[1]})
		args = args[2:]
	}
	return out
}

func (l *Logger) log(level int, msg string, args []any) {
	if !l.enabled(level) {
		return
	}
	l.write(level, l.now(), msg, attrs(args))
}

// write prints one line.
func (l *Logger) write(level int, at time.Time, msg string, as []attr) {
	all := append([]attr{{"time", at.UTC().Format("2006-01-02T15:04:05.000Z07:00")}, {"level", levelNames[level]}, {"msg", msg}}, as...)
	var b strings.Builder
	if l.json {
		b.WriteByte('{')
		for i, a := range all {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(a.key)
			v, err := json.Marshal(jsonValue(a.val))
			if err != nil {
				v, _ = json.Marshal(text(a.val))
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
	} else {
		for i, a := range all {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(logfmtQuote(a.key))
			b.WriteByte('=')
			b.WriteString(logfmtQuote(text(a.val)))
		}
	}
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, b.String())
}

// text is a value as logfmt shows it: durations as Go writes them (1m30s),
// times in RFC 3339, errors by their message.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	case nil:
		return "<nil>"
	}
	return fmt.Sprint(v)
}

// jsonValue is a value as a JSON field: numbers and booleans as themselves,
// the rest as text (a duration "1m30s", as promslog writes it).
func jsonValue(v any) any {
	switch v.(type) {
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return v
	}
	return text(v)
}

// logfmtQuote quotes s as slog's TextHandler does: when it is empty or holds
// a space, '=', '"' or anything unprintable.
func logfmtQuote(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == '=' || r == '"' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
