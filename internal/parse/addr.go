package parse

import (
	"encoding/json"
	"fmt"
	"io"
)

// LinkAddrs is one interface and its addresses (without prefix lengths), in
// the order "ip addr" lists them.
type LinkAddrs struct {
	Name  string
	Addrs []string
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
