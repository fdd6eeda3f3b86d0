package check

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// ipsecLayer is what an IPsec policy that selects a tunnel's outer packets
// adds to them: the WireGuard over IPsec layers of the ICMP-less
// site-to-site case, whose "encapsulation headers continuously eat the
// available MTU" while a check that counts WireGuard's 60 bytes alone sees
// room to spare.
type ipsecLayer struct {
	bytes int    // the most it adds to one packet
	what  string // "ESP tunnel mode to 198.51.100.2, cbc(aes) + hmac(sha256) with a 128-bit ICV, NAT-T (UDP 4500)"
}

// espFixed is ESP's own bytes: SPI and sequence number (8) and the trailer's
// pad length and next header (2).
const espFixed = 8 + 2

// ipsecFor is the IPsec layer the host's outbound policies put on WireGuard's
// packets from src (when known) to endpoint:port, if one does (the lowest
// priority that selects them, as the kernel picks).
func ipsecFor(s *facts.Snapshot, src, endpoint string, port int) (ipsecLayer, bool) {
	if s.IPsec == nil {
		return ipsecLayer{}, false
	}
	var pol *facts.XfrmPolicy
	for i := range s.IPsec.Policies {
		p := &s.IPsec.Policies[i]
		if p.Dir != "out" || p.Action == "block" || len(p.Templates) == 0 || !routeCovers(p.Dst, endpoint) || src != "" && !routeCovers(p.Src, src) ||
			p.Proto != "" && p.Proto != "udp" || p.DPort != 0 && p.DPort != port {
			continue
		}
		if pol == nil || p.Priority < pol.Priority {
			pol = p
		}
	}
	if pol == nil {
		return ipsecLayer{}, false
	}
	var layer ipsecLayer
	var parts []string
	for _, t := range pol.Templates {
		bytes, what := templateOverhead(s.IPsec.States, t, endpoint)
		layer.bytes += bytes
		if what != "" {
			parts = append(parts, what)
		}
	}
	layer.what = strings.Join(parts, ", then ")
	return layer, layer.bytes > 0
}

// templateOverhead is one transformation's bytes at most, and what it is.
func templateOverhead(states []facts.XfrmState, t facts.XfrmTemplate, endpoint string) (int, string) {
	dst := t.Dst
	if !specified(dst) {
		dst = endpoint // a transport mode template names no addresses (ip prints 0.0.0.0)
	}
	outer := 0
	if t.Mode == "tunnel" {
		outer = 20
		if familyOf(dst) == "inet6" {
			outer = 40
		}
	}
	var st *facts.XfrmState
	for i := range states {
		if states[i].Proto == t.Proto && states[i].Dst == dst && (!specified(t.Src) || states[i].Src == t.Src) {
			st = &states[i]
			break
		}
	}
	mode := t.Mode + " mode"
	if t.Mode == "tunnel" {
		mode += " to " + dst
	}
	switch t.Proto {
	case "esp":
		if st == nil {
			// The largest common suite: AES-CBC (16-byte IV and blocks) with
			// HMAC-SHA256 truncated to 128 bits.
			return outer + espFixed + 16 + 15 + 16, "ESP " + mode + ", its algorithms not seen (assumed cbc(aes) + hmac(sha256), the largest common)"
		}
		bytes, algos := espOverhead(*st)
		what := "ESP " + mode + ", " + algos
		if st.Encap == "espinudp" {
			bytes += 8
			what += ", NAT-T (UDP 4500)"
		}
		return outer + bytes, what
	case "ah":
		icv := 12
		if st != nil && st.AuthBits > 0 {
			icv = st.AuthBits / 8
		}
		return outer + 12 + icv, "AH " + mode
	}
	return 0, "" // IPComp shrinks what it carries
}

// espOverhead is the most ESP adds with st's algorithms: its fixed bytes,
// the cipher's IV, padding to its block (block−1 at most) and the ICV.
func espOverhead(st facts.XfrmState) (int, string) {
	if st.AEAD != "" {
		icv := 16
		if st.ICVBits > 0 {
			icv = st.ICVBits / 8
		}
		// GCM, CCM and ChaCha20-Poly1305 carry an 8-byte IV and pad to 4 bytes.
		return espFixed + 8 + 3 + icv, fmt.Sprintf("%s with a %d-bit ICV", st.AEAD, 8*icv)
	}
	iv, block := 16, 16
	switch {
	case strings.Contains(st.Enc, "cipher_null"):
		iv, block = 0, 4
	case strings.Contains(st.Enc, "ctr("):
		iv, block = 8, 4
	case strings.Contains(st.Enc, "des"), strings.Contains(st.Enc, "blowfish"), strings.Contains(st.Enc, "cast5"):
		iv, block = 8, 8
	}
	icv := 0
	if st.Auth != "" {
		icv = 12 // "auth" without a length: the kernel truncates to 96 bits
		if st.AuthBits > 0 {
			icv = st.AuthBits / 8
		}
	}
	algos := cmp.Or(st.Enc, "no cipher")
	if st.Auth != "" {
		algos += fmt.Sprintf(" + %s with a %d-bit ICV", st.Auth, 8*icv)
	}
	return espFixed + iv + block - 1 + icv, algos
}

// specified: addr is an address, not ip's 0.0.0.0 or :: for "none".
func specified(addr string) bool {
	a, err := netip.ParseAddr(addr)
	return err == nil && !a.IsUnspecified()
}
