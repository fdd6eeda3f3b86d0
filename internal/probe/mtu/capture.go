package mtu

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/clock"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// TCP/IP headers under the MSS: MTU = MSS + 40 (IPv4) or + 60 (IPv6).
const (
	TCPIPv4Headers = 40
	TCPIPv6Headers = 60
)

// SYN is one SYN or SYN-ACK as tcpdump printed it.
type SYN struct {
	SrcAddr string `json:"src_addr"`
	SrcPort int    `json:"src_port"`
	DstAddr string `json:"dst_addr"`
	DstPort int    `json:"dst_port"`
	ACK     bool   `json:"ack"` // a SYN-ACK
	MSS     int    `json:"mss"` // 0: no MSS option
	IPv6    bool   `json:"ipv6"`
}

// ParseTcpdump reads the packet lines of "tcpdump -n" (other lines, such as
// "listening on ..." when stderr is mixed in, are skipped) and returns the
// TCP SYNs and SYN-ACKs among them, in order.
//
//	00:56:20.684178 IP 198.51.100.2.35482 > 203.0.113.2.5299: Flags [S], seq 3296894893, win 64240, options [mss 1460,sackOK,...], length 0
func ParseTcpdump(r io.Reader) ([]SYN, error) {
	var out []SYN
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		// Packet lines: [time] [iface dir] IP|IP6 SRC > DST: Flags [..], ...
		ip := -1
		for i := 0; i < len(f) && i < 4; i++ {
			if f[i] == "IP" || f[i] == "IP6" {
				ip = i
				break
			}
		}
		if ip < 0 || len(f) < ip+6 || f[ip+2] != ">" || f[ip+4] != "Flags" {
			continue
		}
		flags := strings.TrimSuffix(f[ip+5], ",")
		if !strings.HasPrefix(flags, "[") || !strings.Contains(flags, "S") {
			continue // not a SYN: the filter let something else through
		}
		s := SYN{IPv6: f[ip] == "IP6", ACK: strings.Contains(flags, ".")}
		var err error
		if s.SrcAddr, s.SrcPort, err = splitAddrPort(f[ip+1]); err != nil {
			return nil, fmt.Errorf("tcpdump line %d: %v", n, err)
		}
		if s.DstAddr, s.DstPort, err = splitAddrPort(strings.TrimSuffix(f[ip+3], ":")); err != nil {
			return nil, fmt.Errorf("tcpdump line %d: %v", n, err)
		}
		if s.MSS, err = optionMSS(sc.Text()); err != nil {
			return nil, fmt.Errorf("tcpdump line %d: %v", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// splitAddrPort splits tcpdump's "198.51.100.2.35482" or "::1.5299".
func splitAddrPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", 0, fmt.Errorf("%q is not address.port", s)
	}
	port, err := strconv.Atoi(s[i+1:])
	if err != nil || net.ParseIP(s[:i]) == nil {
		return "", 0, fmt.Errorf("%q is not address.port", s)
	}
	return s[:i], port, nil
}

// optionMSS finds "mss N" in a line's "options [...]"; 0 when there is none.
func optionMSS(line string) (int, error) {
	_, opts, ok := strings.Cut(line, "options [")
	if !ok {
		return 0, nil
	}
	opts, _, _ = strings.Cut(opts, "]")
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(o), "mss "); ok {
			m, err := strconv.Atoi(v)
			if err != nil || m <= 0 || m > 65535 {
				return 0, fmt.Errorf("bad MSS option %q", o)
			}
			return m, nil
		}
	}
	return 0, nil
}

// MSSPath is one handshake segment's MSS as it left one end and as it reached
// the other. A difference means a box on the way rewrote it (an MSS clamp).
type MSSPath struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Segment  string `json:"segment"`  // "SYN" or "SYN-ACK"
	Sent     int    `json:"sent"`     // captured at From
	Received int    `json:"received"` // captured at To
}

// Clamped reports whether the MSS changed on the way.
func (p MSSPath) Clamped() bool { return p.Sent != p.Received }

// CaptureResult is the negotiated-MSS measurement over the underlay.
type CaptureResult struct {
	Client          target.Spec `json:"client"`
	Server          target.Spec `json:"server"`
	Addr            string      `json:"addr"` // the server's underlay address
	Port            int         `json:"port"`
	IPv6            bool        `json:"ipv6"`
	ClientDevice    string      `json:"client_device"` // underlay interfaces tcpdump listened on
	ServerDevice    string      `json:"server_device"`
	Forward         MSSPath     `json:"forward"` // client's SYN
	Reverse         MSSPath     `json:"reverse"` // server's SYN-ACK
	NarrowestMSS    int         `json:"narrowest_mss"`
	PathMTU         int         `json:"path_mtu"` // implied: narrowest MSS + 40 (IPv6 + 60)
	WGMTU           int         `json:"wg_mtu"`   // path MTU - 60 (IPv6 outer - 80)
	ClientInterface string      `json:"client_interface,omitempty"`
	ClientWGMTU     int         `json:"client_wg_mtu,omitempty"` // the client's WireGuard MTU now
	Seconds         float64     `json:"seconds"`
	// Findings holds mtu.tunnel-too-large when the client's WireGuard MTU
	// exceeds what the negotiated MSS allows.
	Findings []finding.Finding `json:"findings"`
}

// MarshalJSON writes empty lists as [], never null.
func (r CaptureResult) MarshalJSON() ([]byte, error) {
	type plain CaptureResult
	p := plain(r)
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
}

// AnalyzeCapture pairs the handshake as the client's and the server's
// tcpdumps saw it: the first SYN to port and the first SYN-ACK from it on
// each side. The implied narrowest MTU comes from the smallest MSS of the
// four, since each end also advertises its own interface MTU. It is pure.
func AnalyzeCapture(res *CaptureResult, client, server []SYN) error {
	pick := func(syns []SYN, ack bool, where string) (SYN, error) {
		for _, s := range syns {
			if s.ACK == ack && ((!ack && s.DstPort == res.Port) || (ack && s.SrcPort == res.Port)) {
				if s.MSS == 0 {
					return s, fmt.Errorf("the %s seen on %s carries no MSS option", segName(ack), where)
				}
				return s, nil
			}
		}
		return SYN{}, fmt.Errorf("%s saw no %s of port %d: does the traffic take another interface, or is there NAT on the way?", where, segName(ack), res.Port)
	}
	cSyn, err := pick(client, false, res.Client.String()+" on "+res.ClientDevice)
	if err != nil {
		return err
	}
	sSyn, err := pick(server, false, res.Server.String()+" on "+res.ServerDevice)
	if err != nil {
		return err
	}
	sAck, err := pick(server, true, res.Server.String()+" on "+res.ServerDevice)
	if err != nil {
		return err
	}
	cAck, err := pick(client, true, res.Client.String()+" on "+res.ClientDevice)
	if err != nil {
		return err
	}
	res.IPv6 = cSyn.IPv6
	res.Forward = MSSPath{From: res.Client.String(), To: res.Server.String(), Segment: "SYN", Sent: cSyn.MSS, Received: sSyn.MSS}
	res.Reverse = MSSPath{From: res.Server.String(), To: res.Client.String(), Segment: "SYN-ACK", Sent: sAck.MSS, Received: cAck.MSS}
	res.NarrowestMSS = min(cSyn.MSS, sSyn.MSS, sAck.MSS, cAck.MSS)
	hdr, over := TCPIPv4Headers, OverheadIPv4
	if res.IPv6 {
		hdr, over = TCPIPv6Headers, OverheadIPv6
	}
	res.PathMTU = res.NarrowestMSS + hdr
	res.WGMTU = res.PathMTU - over
	res.Findings = CaptureFindings(res)
	return nil
}

func segName(ack bool) string {
	if ack {
		return "SYN-ACK"
	}
	return "SYN"
}

// CaptureFindings reports mtu.tunnel-too-large when the client's WireGuard
// MTU is above what the negotiated MSS leaves room for. It is pure.
func CaptureFindings(r *CaptureResult) []finding.Finding {
	if r.ClientInterface == "" || r.ClientWGMTU == 0 || r.WGMTU <= 0 || r.ClientWGMTU <= r.WGMTU {
		return nil
	}
	hdr, over := TCPIPv4Headers, OverheadIPv4
	if r.IPv6 {
		hdr, over = TCPIPv6Headers, OverheadIPv6
	}
	m := strconv.Itoa(r.WGMTU)
	fix, err := remedy.WGMTU(r.ClientInterface, r.WGMTU, remedy.Unknown, "")
	return []finding.Finding{{
		ID: catalog.MTUTunnelTooLarge, Severity: finding.Warning, Host: r.Client, Interface: r.ClientInterface,
		Title: fmt.Sprintf("WireGuard MTU %d on %s is above the %d the negotiated MSS leaves room for", r.ClientWGMTU, r.ClientInterface, r.WGMTU),
		Detail: fmt.Sprintf("A TCP handshake over the underlay to %s negotiated MSS %d, so the narrowest link carries %d-byte packets (MSS + %d). "+
			"WireGuard adds %d bytes, so tunnel packets above %d bytes are fragmented or dropped.", r.Addr, r.NarrowestMSS, r.PathMTU, hdr, over, r.WGMTU),
		Evidence: []finding.Evidence{
			{Source: "tcpdump SYN", Key: fmt.Sprintf("MSS %s -> %s", r.Forward.From, r.Forward.To), Value: fmt.Sprintf("sent %d, received %d", r.Forward.Sent, r.Forward.Received)},
			{Source: "tcpdump SYN-ACK", Key: fmt.Sprintf("MSS %s -> %s", r.Reverse.From, r.Reverse.To), Value: fmt.Sprintf("sent %d, received %d", r.Reverse.Sent, r.Reverse.Received)},
			finding.Evidence{Source: "/sys/class/net/" + r.ClientInterface + "/mtu", Key: "WireGuard MTU", Value: strconv.Itoa(r.ClientWGMTU), Threshold: "<= " + m}.Of(float64(r.ClientWGMTU), finding.Bytes),
		},
		Fixes: remedy.Fixes(fmt.Sprintf("Set the WireGuard MTU to %d on both ends", r.WGMTU), fix, err),
	}}
}

// CaptureConfig is one negotiated-MSS capture between two hosts.
type CaptureConfig struct {
	Client, Server  target.Target
	Addr            string // the server's underlay address
	ClientInterface string // the client's WireGuard interface ("" skips the finding)
	Port            int    // iperf3 port the handshake goes to (0: iperf.DefaultPort)
	Progress        io.Writer
	Clock           clock.Clock // waits for tcpdump; the zero value is real time
}

// Capture runs tcpdump on both ends' underlay interfaces, opens one TCP
// connection over the underlay (a 1 s iperf3 run) and reads the MSS of the
// SYN and SYN-ACK as each end sent and received them.
func Capture(ctx context.Context, c CaptureConfig) (*CaptureResult, error) {
	start := c.Clock.Now()
	if c.Port == 0 {
		c.Port = iperf.DefaultPort
	}
	ip := net.ParseIP(c.Addr)
	if ip == nil {
		return nil, fmt.Errorf("%q is not an IP address", c.Addr)
	}
	res := &CaptureResult{Client: target.Of(c.Client), Server: target.Of(c.Server), Addr: c.Addr, Port: c.Port, IPv6: ip.To4() == nil, ClientInterface: c.ClientInterface}
	cDev, cSrc, err := routeDev(ctx, c.Client, c.Addr)
	if err != nil {
		return nil, err
	}
	// The server answers the client's underlay source over this device (no NAT assumed).
	sDev, _, err := routeDev(ctx, c.Server, cSrc)
	if err != nil {
		return nil, err
	}
	res.ClientDevice, res.ServerDevice = cDev, sDev
	if c.ClientInterface != "" {
		if b, err := c.Client.ReadFile(ctx, "/sys/class/net/"+c.ClientInterface+"/mtu"); err == nil {
			res.ClientWGMTU, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	filter := fmt.Sprintf("tcp[tcpflags] & tcp-syn != 0 and port %d", c.Port)
	if res.IPv6 {
		// libpcap's tcp[] works on IPv4 only: read the flags after a plain 40-byte IPv6 header.
		filter = fmt.Sprintf("ip6 and ip6[6] == 6 and ip6[53] & 2 != 0 and port %d", c.Port)
	}
	var dumps []*target.Process
	defer func() {
		for _, p := range dumps {
			_ = p.Stop(time.Second)
		}
	}()
	for _, end := range []struct {
		t   target.Target
		dev string
	}{{c.Client, cDev}, {c.Server, sDev}} {
		p, err := startTcpdump(ctx, c.Clock, end.t, end.dev, filter)
		if err != nil {
			return nil, err
		}
		dumps = append(dumps, p)
	}
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "tcpdump on %s %s and %s %s; one TCP connection to %s port %d\n", c.Client, cDev, c.Server, sDev, c.Addr, c.Port)
	}
	if _, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: c.Addr, Port: c.Port, Seconds: 1, Timeout: 15 * time.Second, Clock: c.Clock}); err != nil {
		return nil, fmt.Errorf("TCP connection over the underlay: %w", err)
	}
	// -c 2 ends tcpdump after the handshake; give it a moment to print.
	c.Clock.WaitUntil(3*time.Second, 20*time.Millisecond, func() bool { return dumps[0].Exited() && dumps[1].Exited() })
	var syns [2][]SYN
	for i, p := range dumps {
		_ = p.Stop(time.Second)
		if syns[i], err = ParseTcpdump(strings.NewReader(p.Stderr())); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	if err := AnalyzeCapture(res, syns[0], syns[1]); err != nil {
		return nil, err
	}
	res.Seconds = c.Clock.Since(start).Seconds()
	return res, nil
}

// routeDev is the interface (and source address) t uses towards addr.
func routeDev(ctx context.Context, t target.Target, addr string) (dev, src string, err error) {
	out, err := t.Run(ctx, "ip", "-j", "route", "get", addr)
	read := parse.ParseRouteGet
	if err != nil {
		// BusyBox ip (a router without ip-full) has no -j: read its text.
		if out, err = t.Run(ctx, "ip", "route", "get", addr); err != nil {
			return "", "", fmt.Errorf("no route to %s on %s: %w", addr, t, err)
		}
		read = parse.ParseRouteGetText
	}
	dev, _, src, err = read(bytes.NewReader(out))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", t, err)
	}
	return dev, src, nil
}

// startTcpdump starts "tcpdump -c 2" on t and waits until it listens. Its
// packet lines go to stderr with its messages, which Process keeps.
func startTcpdump(ctx context.Context, clk clock.Clock, t target.Target, dev, filter string) (*target.Process, error) {
	if _, err := t.Run(ctx, "tcpdump", "--version"); target.IsNotFound(err) {
		return nil, fmt.Errorf("tcpdump is not installed on %s: install it there (apt-get install tcpdump, dnf install tcpdump or on OpenWrt %s)", t, openwrt.Install("tcpdump"))
	}
	p, err := t.Start(ctx, "sh", "-c", "exec "+shell.Join("tcpdump", "-n", "-l", "-i", dev, "-c", "2", filter)+" 1>&2")
	if err != nil {
		return nil, err
	}
	listening := clk.WaitUntil(5*time.Second, 20*time.Millisecond, func() bool {
		return strings.Contains(p.Stderr(), "listening on") || p.Exited()
	})
	switch {
	case listening && strings.Contains(p.Stderr(), "listening on"):
		return p, nil
	case listening:
		return nil, fmt.Errorf("%s: tcpdump on %s: %s", t, dev, lastLine(p.Stderr()))
	}
	_ = p.Stop(time.Second)
	return nil, fmt.Errorf("%s: tcpdump on %s did not start listening within 5 s", t, dev)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
