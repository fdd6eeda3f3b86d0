package remedy

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// BondSlave is the slave (0-based, in the order they were enslaved) by
// which a bond of n slaves hashing layer3+4 (802.3ad or balance-xor) sends
// a UDP flow from src:sport to dst:dport: the kernel's bond_ip_hash over the
// ports and the addresses, its lowest bit dropped, modulo n. The ports are
// XORed into the hash's low bits with the addresses and folded down, so
// tunnels whose ends share a port (5000 to 5000, 5001 to 5001) all hash
// alike on 2 or 4 slaves, where only those low bits choose: the ECMP
// case's consecutive ports spread over its 3 slaves only because 3 is not a
// power of two (testdata/bond, recorded on Linux 6.1). IPv4 only; ok is
// false for anything else.
func BondSlave(src, dst netip.Addr, sport, dport uint16, n int) (slave int, ok bool) {
	if !src.Is4() || !dst.Is4() || n < 1 {
		return 0, false
	}
	s, d := src.As4(), dst.As4()
	// flow_keys' ports and addresses are read as the machine's u32s from
	// their network-order bytes (little endian on x86 and ARM).
	h := uint32(bits.ReverseBytes16(sport)) | uint32(bits.ReverseBytes16(dport))<<16
	h ^= binary.LittleEndian.Uint32(d[:]) ^ binary.LittleEndian.Uint32(s[:])
	h ^= h >> 16
	h ^= h >> 8
	return int((h >> 1) % uint32(n)), true
}

// BondPath is the bond a host's packets to an address leave by.
type BondPath struct {
	Dev    string     // the route's device
	Src    netip.Addr // the route's source address
	Slaves int        // the bond's slaves; 0 when Dev is no bond that hashes ports
	// Members are the bond's slaves whatever its hash (0: Dev is no bond).
	Members int
}

// ReadBondPath reads on env's host the route to addr and, when it leaves by
// a bond whose transmit hash reads ports (802.3ad or balance-xor, layer3+4
// or encap3+4), how many slaves it spreads over.
func ReadBondPath(ctx context.Context, env *Env, addr netip.Addr) (BondPath, error) {
	out, err := env.T.Run(ctx, "ip", "-j", "route", "get", addr.String())
	if err != nil {
		return BondPath{}, fmt.Errorf("%s: ip route get %s: %w", env.T, addr, err)
	}
	var routes []struct {
		Dev     string `json:"dev"`
		PrefSrc string `json:"prefsrc"`
	}
	if err := json.Unmarshal(out, &routes); err != nil || len(routes) == 0 {
		return BondPath{}, fmt.Errorf("%s: ip -j route get %s: %q is not a route", env.T, addr, shell.Terminal(string(out)))
	}
	p := BondPath{Dev: routes[0].Dev}
	p.Src, _ = netip.ParseAddr(routes[0].PrefSrc)
	if checkIface("device", p.Dev) != nil {
		return BondPath{}, fmt.Errorf("%s: the route to %s leaves by %q", env.T, addr, shell.Terminal(p.Dev))
	}
	read := func(name string) []string {
		b, err := env.T.ReadFile(ctx, "/sys/class/net/"+p.Dev+"/bonding/"+name)
		if err != nil {
			return nil
		}
		return strings.Fields(string(b))
	}
	p.Members = len(read("slaves"))
	mode, policy := read("mode"), read("xmit_hash_policy")
	if len(mode) == 0 || len(policy) == 0 || (mode[0] != "802.3ad" && mode[0] != "balance-xor") ||
		(policy[0] != "layer3+4" && policy[0] != "encap3+4") {
		return p, nil
	}
	p.Slaves = p.Members
	return p, nil
}

// SpreadClientPort is the lowest client port from which streams
// consecutive ports (iperf3 -P with --cport: each stream the next port)
// from src to dst:dport land on every one of a bond's slaves, as evenly as
// can be, once it hashes on layer3+4. A measurement of the bond's spread
// then shows what the hash does, not what the kernel's ephemeral ports
// happened to be (4 flows on their own ports rode one slave of two in 1 of
// 3 lab runs). ok is false when an address is not IPv4 or streams cannot
// cover the slaves.
func SpreadClientPort(src, dst netip.Addr, dport, streams, slaves int) (port int, ok bool) {
	if _, ok4 := BondSlave(src, dst, 0, 0, 1); !ok4 || slaves < 2 || streams < slaves {
		return 0, false
	}
	for p := 49152; p+streams-1 <= 65535; p++ {
		per := make([]int, slaves)
		for i := range streams {
			s, _ := BondSlave(src, dst, uint16(p+i), uint16(dport), slaves)
			per[s]++
		}
		if slices.Max(per)-slices.Min(per) <= 1 && slices.Min(per) > 0 {
			return p, true
		}
	}
	return 0, false
}

// maxPortSearch bounds how far above the usual port SpreadPorts looks.
const maxPortSearch = 4096

// SpreadPorts chooses the listen ports of the tunnels-1 new tunnels of an
// ECMP change between near (its tunnel on nearPort) and far (on farPort), so
// that a bond hashing ports at either end sends tunnel k by the slave after
// tunnel k-1's: the far end's ports follow its own (farPort+k), and each of
// the near end's is the first above the last that lands where it should on
// both bonds (on the near one alone when no port within reach does on
// both). nearSlaves and farSlaves are each end's (BondPath.Slaves, 0 or 1
// for none); ok is false when neither end has a bond to spread over, or an
// address is not IPv4: the usual consecutive ports then.
func SpreadPorts(nearAddr, farAddr netip.Addr, nearPort, farPort, tunnels, nearSlaves, farSlaves int) (ports, peerPorts []int, ok bool) {
	if nearSlaves < 2 && farSlaves < 2 {
		return nil, nil, false
	}
	slave := func(from, to netip.Addr, sport, dport, n int) int {
		if n < 2 {
			return 0
		}
		s, _ := BondSlave(from, to, uint16(sport), uint16(dport), n)
		return s
	}
	if _, ok4 := BondSlave(nearAddr, farAddr, 0, 0, 1); !ok4 || farPort+tunnels-1 > 65535 {
		return nil, nil, false
	}
	near0 := slave(nearAddr, farAddr, nearPort, farPort, nearSlaves)
	far0 := slave(farAddr, nearAddr, farPort, nearPort, farSlaves)
	last := nearPort
	for k := 1; k < tunnels; k++ {
		fp := farPort + k
		fits := func(p int, both bool) bool {
			okNear := nearSlaves < 2 || slave(nearAddr, farAddr, p, fp, nearSlaves) == (near0+k)%nearSlaves
			okFar := farSlaves < 2 || slave(farAddr, nearAddr, fp, p, farSlaves) == (far0+k)%farSlaves
			return okNear && (okFar || !both)
		}
		chosen := 0
		for _, both := range []bool{true, false} {
			for p := last + 1; p <= min(last+maxPortSearch, 65535); p++ {
				if fits(p, both) {
					chosen = p
					break
				}
			}
			if chosen > 0 {
				break
			}
		}
		if chosen == 0 {
			return nil, nil, false
		}
		ports, peerPorts, last = append(ports, chosen), append(peerPorts, fp), chosen
	}
	return ports, peerPorts, true
}
