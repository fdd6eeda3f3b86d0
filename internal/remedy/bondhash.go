package remedy

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
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
