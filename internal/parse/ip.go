package parse

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/wgperf/wgperf/internal/facts"
)

// ipLink is the part of one "ip -j -d link" object wgperf reads.
type ipLink struct {
	Index     int    `json:"ifindex"`
	Name      string `json:"ifname"`
	MTU       int    `json:"mtu"`
	Qdisc     string `json:"qdisc"`
	Master    string `json:"master"`
	Operstate string `json:"operstate"`
	LinkInfo  *struct {
		Kind string `json:"info_kind"`
		Data struct {
			Mode           string `json:"mode"`
			XmitHashPolicy string `json:"xmit_hash_policy"`
		} `json:"info_data"`
	} `json:"linkinfo"`
	// Stats64 comes with -s -s: the counters and their error breakdown.
	Stats64 *struct {
		Rx struct {
			Packets      uint64 `json:"packets"`
			Errors       uint64 `json:"errors"`
			Dropped      uint64 `json:"dropped"`
			OverErrors   uint64 `json:"over_errors"`
			LengthErrors uint64 `json:"length_errors"`
			CRCErrors    uint64 `json:"crc_errors"`
			FrameErrors  uint64 `json:"frame_errors"`
			FIFOErrors   uint64 `json:"fifo_errors"`
			MissedErrors uint64 `json:"missed_errors"`
		} `json:"rx"`
		Tx struct {
			Packets       uint64 `json:"packets"`
			Errors        uint64 `json:"errors"`
			Dropped       uint64 `json:"dropped"`
			CarrierErrors uint64 `json:"carrier_errors"`
			FIFOErrors    uint64 `json:"fifo_errors"`
		} `json:"tx"`
	} `json:"stats64"`
}

// stats lifts the -s -s counters out of l, nil without them.
func (l ipLink) stats() *facts.LinkStats {
	st := l.Stats64
	if st == nil {
		return nil
	}
	return &facts.LinkStats{
		RxPackets: st.Rx.Packets, RxErrors: st.Rx.Errors, RxDropped: st.Rx.Dropped,
		RxFrameErrors: st.Rx.FrameErrors, RxLengthErrors: st.Rx.LengthErrors, RxOverErrors: st.Rx.OverErrors,
		RxCRCErrors: st.Rx.CRCErrors, RxFIFOErrors: st.Rx.FIFOErrors, RxMissed: st.Rx.MissedErrors,
		TxPackets: st.Tx.Packets, TxErrors: st.Tx.Errors, TxDropped: st.Tx.Dropped,
		TxCarrier: st.Tx.CarrierErrors, TxFIFOErrors: st.Tx.FIFOErrors,
	}
}

// ParseIPLink parses "ip -j -d link" (with -s -s, the counters too). Bond slaves are listed on their master,
// whose mode and hash policy come from linkinfo (sysfs fills them when absent).
func ParseIPLink(r io.Reader) ([]facts.Link, error) {
	var raw []ipLink
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("ip -j link: %w", err)
	}
	out := make([]facts.Link, 0, len(raw))
	bonds := map[string]int{}
	for _, l := range raw {
		if l.Name == "" {
			return nil, fmt.Errorf("ip -j link: link %d has no name", l.Index)
		}
		link := facts.Link{Name: l.Name, Index: l.Index, MTU: l.MTU, State: l.Operstate, Master: l.Master, Qdisc: l.Qdisc, Stats: l.stats()}
		if l.LinkInfo != nil {
			link.Kind = l.LinkInfo.Kind
			if link.Kind == "bond" {
				link.Bond = &facts.Bond{Mode: l.LinkInfo.Data.Mode, XmitHashPolicy: l.LinkInfo.Data.XmitHashPolicy, Slaves: []string{}}
				bonds[l.Name] = len(out)
			}
		}
		out = append(out, link)
	}
	for _, l := range out {
		if i, ok := bonds[l.Master]; ok {
			out[i].Bond.Slaves = append(out[i].Bond.Slaves, l.Name)
		}
	}
	return out, nil
}

// ipRoute is one "ip -j route" object.
type ipRoute struct {
	Type     string   `json:"type"`
	Dst      string   `json:"dst"`
	Gateway  string   `json:"gateway"`
	Dev      string   `json:"dev"`
	Table    string   `json:"table"`
	Protocol string   `json:"protocol"`
	Metric   int      `json:"metric"`
	Scope    string   `json:"scope"`
	PrefSrc  string   `json:"prefsrc"`
	Flags    []string `json:"flags"`
	Nexthops []struct {
		Gateway string `json:"gateway"`
		Dev     string `json:"dev"`
		Weight  int    `json:"weight"`
	} `json:"nexthops"`
}

// ParseIPRoute parses "ip -j -4|-6 route show table all"; family is "inet" or
// "inet6" because the JSON does not say. Routes without a table are in "main".
func ParseIPRoute(r io.Reader, family string) ([]facts.Route, error) {
	var raw []ipRoute
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("ip -j route: %w", err)
	}
	out := make([]facts.Route, 0, len(raw))
	for _, rt := range raw {
		if rt.Dst == "" {
			return nil, fmt.Errorf("ip -j route: route without dst")
		}
		route := facts.Route{Family: family, Table: rt.Table, Type: rt.Type, Dst: rt.Dst, Gateway: rt.Gateway,
			Dev: rt.Dev, Protocol: rt.Protocol, Metric: rt.Metric, Scope: rt.Scope, PrefSrc: rt.PrefSrc}
		if route.Table == "" {
			route.Table = "main"
		}
		if len(rt.Flags) > 0 {
			route.Flags = rt.Flags
		}
		for _, nh := range rt.Nexthops {
			route.Nexthops = append(route.Nexthops, facts.Nexthop{Gateway: nh.Gateway, Dev: nh.Dev, Weight: nh.Weight})
		}
		out = append(out, route)
	}
	return out, nil
}

// ipRule is one "ip -j rule" object.
type ipRule struct {
	Priority *int            `json:"priority"`
	Src      string          `json:"src"`
	SrcLen   *int            `json:"srclen"`
	Dst      string          `json:"dst"`
	DstLen   *int            `json:"dstlen"`
	FwMark   string          `json:"fwmark"`
	FwMask   string          `json:"fwmask"`
	IIf      string          `json:"iif"`
	Table    string          `json:"table"`
	Action   string          `json:"action"`
	Goto     json.RawMessage `json:"goto"`
}

// ParseIPRule parses "ip -j -4|-6 rule".
func ParseIPRule(r io.Reader, family string) ([]facts.RouteRule, error) {
	var raw []ipRule
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("ip -j rule: %w", err)
	}
	out := make([]facts.RouteRule, 0, len(raw))
	for _, ru := range raw {
		if ru.Priority == nil {
			return nil, fmt.Errorf("ip -j rule: rule without priority")
		}
		rule := facts.RouteRule{Family: family, Priority: *ru.Priority, Src: prefix(ru.Src, ru.SrcLen),
			Dst: prefix(ru.Dst, ru.DstLen), FwMark: ru.FwMark, IIf: ru.IIf, Table: ru.Table, Action: ru.Action}
		if rule.Src == "all" {
			rule.Src = ""
		}
		if ru.FwMask != "" && rule.FwMark != "" {
			rule.FwMark += "/" + ru.FwMask
		}
		if len(ru.Goto) > 0 {
			rule.Action = "goto " + string(ru.Goto)
		}
		out = append(out, rule)
	}
	return out, nil
}

func prefix(addr string, length *int) string {
	if addr == "" || length == nil {
		return addr
	}
	return addr + "/" + strconv.Itoa(*length)
}

// ParseRouteGet parses "ip -j route get ADDR": the device, gateway and source
// address the kernel would use.
func ParseRouteGet(r io.Reader) (dev, gateway, src string, err error) {
	var raw []struct {
		Dev     string `json:"dev"`
		Gateway string `json:"gateway"`
		PrefSrc string `json:"prefsrc"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return "", "", "", fmt.Errorf("ip -j route get: %w", err)
	}
	if len(raw) == 0 || raw[0].Dev == "" {
		return "", "", "", fmt.Errorf("ip -j route get: no route")
	}
	return raw[0].Dev, raw[0].Gateway, raw[0].PrefSrc, nil
}
