//go:build linux && !router

package drops

import (
	"github.com/cilium/ebpf/asm"
)

// key is the count map's key: one dropping site (location) per reason,
// namespace and device. Its layout is the program's stack layout below.
type key struct {
	Location uint64
	Reason   uint32
	Netns    uint32
	Ifindex  uint32
	_        uint32
}

// Stack slots of the program (offsets from the frame pointer R10).
const (
	slotKey     = -24 // key: location -24, reason -16, netns -12, ifindex -8
	slotScratch = -32 // what a probe read brings back
	slotOne     = -40 // the value of a new entry
	slotZero    = -44 // the lost counter's index
)

// source is where the program finds the tracepoint's arguments: a classic
// tracepoint's record (byte offsets) or a tp_btf context (u64 slots).
type source struct {
	btf                   bool
	skb, location, reason int16 // byte offsets in the context
}

func recordSource(r Record) source {
	return source{skb: int16(r.Skb), location: int16(r.Location), reason: int16(r.Reason)}
}

func argsSource(a Args) source {
	return source{btf: true, skb: int16(8 * a.Skb), location: int16(8 * a.Location), reason: int16(8 * a.Reason)}
}

// program assembles the drop counter: it builds the key (location, reason,
// and with a chase the namespace inode and ifindex of the packet's device,
// or the namespace of its socket when it has no device), then adds one to
// the key's count, creating it when there is room and counting a lost drop
// when there is none. Reads of kernel memory go through
// bpf_probe_read_kernel, which a NULL pointer only makes return zeros.
func program(src source, chase *Chase, counts, lost int) asm.Instructions {
	// read puts the u64 (or u32) at *(reg + off) into R8 or the key.
	read := func(base asm.Register, off uint32, size int32) asm.Instructions {
		return asm.Instructions{
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Add.Imm(asm.R1, slotScratch),
			asm.Mov.Imm(asm.R2, 0),
			asm.StoreMem(asm.R10, slotScratch, asm.R2, asm.DWord),
			asm.Mov.Imm(asm.R2, size),
			asm.Mov.Reg(asm.R3, base),
			asm.Add.Imm(asm.R3, int32(off)),
			asm.FnProbeReadKernel.Call(),
		}
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Imm(asm.R1, 0), // (BPF has no 64-bit store of an immediate)
		asm.StoreMem(asm.R10, slotKey, asm.R1, asm.DWord),
		asm.StoreMem(asm.R10, slotKey+8, asm.R1, asm.DWord),
		asm.StoreMem(asm.R10, slotKey+16, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, src.location, asm.DWord),
		asm.StoreMem(asm.R10, slotKey, asm.R1, asm.DWord),
	}
	if src.btf {
		insns = append(insns, asm.LoadMem(asm.R1, asm.R6, src.reason, asm.DWord))
	} else {
		insns = append(insns, asm.LoadMem(asm.R1, asm.R6, src.reason, asm.Word))
	}
	insns = append(insns, asm.StoreMem(asm.R10, slotKey+8, asm.R1, asm.Word))
	if chase != nil {
		insns = append(insns, asm.LoadMem(asm.R7, asm.R6, src.skb, asm.DWord))
		// dev = skb->dev; no device: try the socket.
		insns = append(insns, read(asm.R7, chase.SkbDev, 8)...)
		insns = append(insns,
			asm.LoadMem(asm.R8, asm.R10, slotScratch, asm.DWord),
			asm.JEq.Imm(asm.R8, 0, "socket"),
		)
		insns = append(insns, read(asm.R8, chase.DevIfindex, 4)...)
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R10, slotScratch, asm.Word),
			asm.StoreMem(asm.R10, slotKey+16, asm.R1, asm.Word),
		)
		insns = append(insns, read(asm.R8, chase.DevNet, 8)...)
		insns = append(insns, asm.Ja.Label("net"))
		sock := read(asm.R7, chase.SkbSk, 8)
		sock[0] = sock[0].WithSymbol("socket")
		insns = append(insns, sock...)
		insns = append(insns,
			asm.LoadMem(asm.R8, asm.R10, slotScratch, asm.DWord),
			asm.JEq.Imm(asm.R8, 0, "count"),
		)
		insns = append(insns, read(asm.R8, chase.SockNet, 8)...)
		netns := asm.LoadMem(asm.R8, asm.R10, slotScratch, asm.DWord).WithSymbol("net")
		insns = append(insns, netns, asm.JEq.Imm(asm.R8, 0, "count"))
		insns = append(insns, read(asm.R8, chase.NetInum, 4)...)
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R10, slotScratch, asm.Word),
			asm.StoreMem(asm.R10, slotKey+12, asm.R1, asm.Word),
		)
	}
	insns = append(insns,
		// count: an existing entry grows by one.
		asm.LoadMapPtr(asm.R1, counts).WithSymbol("count"),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, slotKey),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "insert"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Ja.Label("exit"),
		// insert: a new entry of one, unless another CPU was first.
		asm.Mov.Imm(asm.R1, 1).WithSymbol("insert"),
		asm.StoreMem(asm.R10, slotOne, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, counts),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, slotKey),
		asm.Mov.Reg(asm.R3, asm.R10),
		asm.Add.Imm(asm.R3, slotOne),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.LoadMapPtr(asm.R1, counts),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, slotKey),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "lost"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Ja.Label("exit"),
		// lost: the map is full.
		asm.StoreImm(asm.R10, slotZero, 0, asm.Word).WithSymbol("lost"),
		asm.LoadMapPtr(asm.R1, lost),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, slotZero),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	return insns
}
