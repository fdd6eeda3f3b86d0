package parse

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// ParseSSTCPInfo reads `ss -tin` (with or without -H and a state filter):
// a line per socket ("[STATE] RECV-Q SEND-Q LOCAL PEER"), then an indented
// line of its tcp_info ("cubic wscale:7,7 rto:204 rtt:0.5/0.25 mss:1448
// ... pacing_rate 1234bps ..."). Fields it does not know are skipped (each
// ss release adds some); a known field with a malformed value, or a socket
// line that is not one, is an error.
func ParseSSTCPInfo(r io.Reader) ([]facts.TCPSocket, error) {
	var out []facts.TCPSocket
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(out) == 0 {
				return nil, fmt.Errorf("ss: tcp_info before any socket: %q", clip(line))
			}
			if err := ssInfo(&out[len(out)-1], strings.Fields(line)); err != nil {
				return nil, err
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "State" || f[0] == "Recv-Q") {
			continue // the header ss prints without -H
		}
		if len(f) > 0 && !isDigits(f[0]) {
			f = f[1:] // the state column, printed without a state filter
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("ss: malformed socket line %q", clip(line))
		}
		s := facts.TCPSocket{Local: f[2], Peer: f[3]}
		var err error
		if s.RecvQ, err = strconv.ParseInt(f[0], 10, 64); err != nil {
			return nil, fmt.Errorf("ss: Recv-Q %q is not a number", clip(f[0]))
		}
		if s.SendQ, err = strconv.ParseInt(f[1], 10, 64); err != nil {
			return nil, fmt.Errorf("ss: Send-Q %q is not a number", clip(f[1]))
		}
		for _, a := range []string{s.Local, s.Peer} {
			if !ssAddr(a) {
				return nil, fmt.Errorf("ss: %q is not an address and port", clip(a))
			}
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// ssAddr reports whether a is "IP:port" or "[IP]:port" (an IPv6 address
// may carry a zone: "[fe80::1%eth0]:22", "*" stands for any).
func ssAddr(a string) bool {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return false
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil && port != "*" {
		return false
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	return host == "*" || net.ParseIP(host) != nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// ssInfo fills s from the tokens of its tcp_info line.
func ssInfo(s *facts.TCPSocket, f []string) error {
	for i := 0; i < len(f); i++ {
		tok := f[i]
		key, val, hasVal := strings.Cut(tok, ":")
		var err error
		switch {
		case !hasVal && (tok == "cubic" || tok == "bbr" || tok == "bbr2" || tok == "reno" || tok == "htcp" || tok == "vegas" || tok == "dctcp" || tok == "westwood"):
			s.Congestion = tok
		case !hasVal && tok == "app_limited":
			s.AppLimited = true
		case !hasVal && (tok == "pacing_rate" || tok == "delivery_rate"):
			if i+1 >= len(f) {
				return fmt.Errorf("ss: %s without a value", tok)
			}
			i++
			r, err := ssRate(f[i])
			if err != nil {
				return err
			}
			if tok == "pacing_rate" {
				s.PacingRate = r
			} else {
				s.DeliveryRate = r
			}
		case !hasVal:
		case key == "mss":
			s.MSS, err = ssInt(key, val)
		case key == "pmtu":
			s.PMTU, err = ssInt(key, val)
		case key == "advmss":
			s.AdvMSS, err = ssInt(key, val)
		case key == "cwnd":
			s.Cwnd, err = ssInt64(key, val)
		case key == "ssthresh":
			s.Ssthresh, err = ssInt64(key, val)
		case key == "rtt":
			avg, _, _ := strings.Cut(val, "/")
			s.RTTMs, err = ssFloat(key, avg)
		case key == "minrtt":
			s.MinRTTMs, err = ssFloat(key, val)
		case key == "retrans":
			_, total, _ := strings.Cut(val, "/") // in flight now / over the connection's life
			s.Retrans, err = ssInt64(key, total)
		case key == "bytes_acked":
			s.BytesAcked, err = ssInt64(key, val)
		case key == "bytes_received":
			s.BytesReceived, err = ssInt64(key, val)
		case key == "snd_wnd":
			s.SndWnd, err = ssInt64(key, val)
		case key == "rcv_space":
			s.RcvSpace, err = ssInt64(key, val)
		case key == "rcv_wnd":
			s.RcvWnd, err = ssInt64(key, val)
		case key == "busy":
			s.BusyMs, err = ssMillis(key, val)
		case key == "rwnd_limited":
			s.RwndLimitedMs, err = ssMillis(key, val)
		case key == "sndbuf_limited":
			s.SndbufLimitedMs, err = ssMillis(key, val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func ssInt(key, v string) (int, error) {
	n, err := ssInt64(key, v)
	if err != nil || n > 1<<31-1 {
		return 0, fmt.Errorf("ss: %s %q is not a size", key, clip(v))
	}
	return int(n), nil
}

func ssInt64(key, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("ss: %s %q is not a count", key, clip(v))
	}
	return n, nil
}

func ssFloat(key, v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 || x != x || x > 1e12 {
		return 0, fmt.Errorf("ss: %s %q is not a time", key, clip(v))
	}
	return x, nil
}

// ssMillis reads "1276ms" and "1276ms(37.4%)".
func ssMillis(key, v string) (int64, error) {
	ms, _, _ := strings.Cut(v, "(")
	d, ok := strings.CutSuffix(ms, "ms")
	if !ok {
		return 0, fmt.Errorf("ss: %s %q is not in ms", key, clip(v))
	}
	return ssInt64(key, d)
}

// ssRate reads "101041608bps", or with ss's units ("1.2Mbps", "800Kbps").
func ssRate(v string) (float64, error) {
	num, ok := strings.CutSuffix(v, "bps")
	if !ok {
		return 0, fmt.Errorf("ss: rate %q is not in bps", clip(v))
	}
	mult := 1.0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'K':
			mult, num = 1e3, num[:n-1]
		case 'M':
			mult, num = 1e6, num[:n-1]
		case 'G':
			mult, num = 1e9, num[:n-1]
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 || x != x || x > 1e15 {
		return 0, fmt.Errorf("ss: rate %q is not a rate", clip(v))
	}
	return x * mult, nil
}

// clip shortens foreign text quoted in an error to 80 bytes.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
