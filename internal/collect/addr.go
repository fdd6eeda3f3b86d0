package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// LinkAddrs is one interface and its addresses (without prefix lengths), in
// the order "ip addr" lists them.
type LinkAddrs struct {
	Name  string
	Addrs []string
}

// Addresses asks t for its interfaces' addresses: "ip -j addr", or BusyBox
// ip's text where ip has no JSON (OpenWrt without ip-full), in one command.
func Addresses(ctx context.Context, t target.Target) ([]LinkAddrs, error) {
	out, err := t.Run(ctx, "sh", "-c", ipJSONOr("ip -j addr show", "ip addr show"))
	if err != nil {
		return nil, fmt.Errorf("%s: ip addr: %w", t, err)
	}
	if text, ok := cutIPText(string(out)); ok {
		links, err := ParseIPAddrText(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%s: BusyBox ip addr: %w (opkg install ip-full gives ip -j)", t, err)
		}
		return links, nil
	}
	links, err := ParseIPAddr(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return links, nil
}

// ParseIPAddr reads "ip -j addr".
func ParseIPAddr(r io.Reader) ([]LinkAddrs, error) {
	var raw []struct {
		IfName   string `json:"ifname"`
		AddrInfo []struct {
			Local string `json:"local"`
		} `json:"addr_info"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("ip -j addr: %w", err)
	}
	var out []LinkAddrs
	for _, l := range raw {
		if l.IfName == "" {
			return nil, fmt.Errorf("ip -j addr: an entry without ifname")
		}
		link := LinkAddrs{Name: l.IfName}
		for _, a := range l.AddrInfo {
			if a.Local != "" {
				link.Addrs = append(link.Addrs, a.Local)
			}
		}
		out = append(out, link)
	}
	return out, nil
}
