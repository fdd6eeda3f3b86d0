//go:build !router

package drops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Args are the positions of kfree_skb's arguments in a tp_btf program's
// context (the tracepoint's own arguments, its __data pointer not counted).
type Args struct {
	Skb, Location, Reason int
	N                     int // how many there are
}

// Chase is where, from a struct sk_buff, the sampler finds the packet's
// network namespace (its device's, or else its socket's) and its device's
// ifindex: byte offsets, read from the kernel's BTF.
type Chase struct {
	SkbDev, SkbSk   uint32 // sk_buff.dev, sk_buff.sk
	DevIfindex      uint32 // net_device.ifindex
	DevNet, SockNet uint32 // net_device.nd_net.net, sock.__sk_common.skc_net.net
	NetInum         uint32 // net.ns.inum
}

// BTFLayout is what the kernel's BTF says about kfree_skb.
type BTFLayout struct {
	// Args is nil when BTF has no btf_trace_kfree_skb (no tp_btf tier).
	Args *Args
	// Chase is nil when a struct on the way lacks a member (then drops are
	// counted for every namespace together).
	Chase *Chase
	// ChaseErr says why Chase is nil.
	ChaseErr error
	// Reasons are the values of enum skb_drop_reason, without the prefix.
	Reasons map[uint32]string
}

const reasonPrefix = "SKB_DROP_REASON_"

// LayoutFromBTF reads kfree_skb's arguments, the namespace chase and the
// reason names from a kernel's BTF.
func LayoutFromBTF(spec *btf.Spec) (*BTFLayout, error) {
	var enum *btf.Enum
	if err := spec.TypeByName("skb_drop_reason", &enum); err != nil {
		return nil, fmt.Errorf("BTF has no enum skb_drop_reason (the kernel predates 5.17): %v", err)
	}
	l := &BTFLayout{Reasons: map[uint32]string{}}
	for _, v := range enum.Values {
		// Values from 1<<16 up are the subsystems' space (SKB_DROP_REASON_SUBSYS_MASK), not reasons.
		if name, ok := strings.CutPrefix(v.Name, reasonPrefix); ok && symbolName(name) && v.Value < 1<<16 {
			l.Reasons[uint32(v.Value)] = name
		}
	}
	if len(l.Reasons) == 0 {
		return nil, errors.New("BTF's enum skb_drop_reason has no values")
	}
	if args, err := argsFromBTF(spec); err == nil {
		l.Args = args
	}
	l.Chase, l.ChaseErr = chaseFromBTF(spec)
	return l, nil
}

// argsFromBTF reads the prototype of btf_trace_kfree_skb, the typedef the
// kernel declares for every tracepoint's BTF-enabled program.
func argsFromBTF(spec *btf.Spec) (*Args, error) {
	var td *btf.Typedef
	if err := spec.TypeByName("btf_trace_kfree_skb", &td); err != nil {
		return nil, err
	}
	ptr, ok := btf.UnderlyingType(td.Type).(*btf.Pointer)
	if !ok {
		return nil, errors.New("btf_trace_kfree_skb is not a function pointer")
	}
	proto, ok := btf.UnderlyingType(ptr.Target).(*btf.FuncProto)
	if !ok || len(proto.Params) < 2 {
		return nil, errors.New("btf_trace_kfree_skb is not a function pointer")
	}
	params := proto.Params[1:] // the first is the tracepoint's __data
	a := &Args{Skb: -1, Location: -1, Reason: -1, N: len(params)}
	for i, p := range params {
		switch t := btf.UnderlyingType(p.Type).(type) {
		case *btf.Enum:
			if t.Name == "skb_drop_reason" {
				a.Reason = i
			}
		case *btf.Pointer:
			switch target := btf.UnderlyingType(t.Target).(type) {
			case *btf.Struct:
				if target.Name == "sk_buff" && a.Skb < 0 {
					a.Skb = i
				}
			case *btf.Void:
				if a.Location < 0 {
					a.Location = i
				}
			}
		}
	}
	if a.Skb < 0 || a.Location < 0 || a.Reason < 0 {
		return nil, fmt.Errorf("btf_trace_kfree_skb takes no (sk_buff, location, reason)")
	}
	return a, nil
}

func chaseFromBTF(spec *btf.Spec) (*Chase, error) {
	structOf := func(name string) (*btf.Struct, error) {
		var s *btf.Struct
		if err := spec.TypeByName(name, &s); err != nil {
			return nil, fmt.Errorf("BTF: struct %s: %v", name, err)
		}
		return s, nil
	}
	skb, err := structOf("sk_buff")
	if err != nil {
		return nil, err
	}
	dev, err := structOf("net_device")
	if err != nil {
		return nil, err
	}
	sock, err := structOf("sock")
	if err != nil {
		return nil, err
	}
	netns, err := structOf("net")
	if err != nil {
		return nil, err
	}
	var c Chase
	for _, m := range []struct {
		at   *uint32
		in   *btf.Struct
		path string
		size uint32
	}{
		{&c.SkbDev, skb, "dev", 8},
		{&c.SkbSk, skb, "sk", 8},
		{&c.DevIfindex, dev, "ifindex", 4},
		{&c.DevNet, dev, "nd_net.net", 8},
		{&c.SockNet, sock, "__sk_common.skc_net.net", 8},
		{&c.NetInum, netns, "ns.inum", 4},
	} {
		off, t, err := memberAt(m.in, strings.Split(m.path, "."))
		if err != nil {
			return nil, fmt.Errorf("BTF: struct %s: %v", m.in.Name, err)
		}
		if size, err := btf.Sizeof(t); err != nil || uint32(size) != m.size {
			return nil, fmt.Errorf("BTF: struct %s.%s is not %d bytes", m.in.Name, m.path, m.size)
		}
		*m.at = off
	}
	return &c, nil
}

// memberAt finds a member by its path of names, looking through anonymous
// structs and unions on the way, and returns its byte offset and type.
func memberAt(t btf.Type, path []string) (uint32, btf.Type, error) {
	var off uint32
	for _, name := range path {
		m, at, ok := findMember(t, name, 0)
		if !ok {
			return 0, nil, fmt.Errorf("no member %s", strings.Join(path, "."))
		}
		off += at
		t = m.Type
	}
	return off, t, nil
}

func findMember(t btf.Type, name string, depth int) (btf.Member, uint32, bool) {
	var members []btf.Member
	switch c := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		members = c.Members
	case *btf.Union:
		members = c.Members
	default:
		return btf.Member{}, 0, false
	}
	if depth > 8 {
		return btf.Member{}, 0, false
	}
	for _, m := range members {
		if m.BitfieldSize != 0 {
			continue
		}
		if m.Name == name {
			return m, m.Offset.Bytes(), true
		}
		if m.Name == "" {
			if inner, at, ok := findMember(m.Type, name, depth+1); ok {
				return inner, m.Offset.Bytes() + at, true
			}
		}
	}
	return btf.Member{}, 0, false
}
