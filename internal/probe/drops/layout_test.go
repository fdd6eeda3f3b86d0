//go:build !router

package drops

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/google/go-cmp/cmp"
)

// recordBTF writes this machine's kernel BTF, pruned to what the sampler
// reads, as testdata/btf-RELEASE.btf (run it in the kernel-WireGuard guest
// too, with a --rwdir: go test -c, then the binary with -record-btf DIR).
var recordBTF = flag.String("record-btf", "", "write this kernel's pruned BTF into `DIR`")

// kernels are the recorded kernels: this machine's and the guest's (the
// layout before 6.11: no rx_sk, reason at 28; NOT_SPECIFIED was 1).
var kernels = []struct {
	release              string
	record               Record
	args                 Args
	notSpecified         uint32
	reasons              int
	pktTooBig, qdiscDrop uint32
}{
	{"6.1", Record{Skb: 8, Location: 16, Reason: 28}, Args{Skb: 0, Location: 1, Reason: 2, N: 3}, 1, 66, 64, 45},
	{"6.18", Record{Skb: 8, Location: 16, Reason: 36}, Args{Skb: 0, Location: 1, Reason: 2, N: 4}, 2, 127, 93, 64},
}

func readFormatFile(t *testing.T, release string) *Format {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kfree_skb-"+release+".format"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFormat(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFormatOfBothLayouts(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.release, func(t *testing.T) {
			f := readFormatFile(t, k.release)
			rec, err := RecordOf(f)
			if err != nil {
				t.Fatal(err)
			}
			if rec != k.record {
				t.Errorf("record = %+v, want %+v", rec, k.record)
			}
			if f.Name != "kfree_skb" || len(f.Reasons) != k.reasons {
				t.Errorf("name %q, %d reasons; want kfree_skb, %d", f.Name, len(f.Reasons), k.reasons)
			}
			for v, name := range map[uint32]string{k.notSpecified: "NOT_SPECIFIED", k.pktTooBig: "PKT_TOO_BIG", k.qdiscDrop: "QDISC_DROP"} {
				if f.Reasons[v] != name {
					t.Errorf("reason %d = %q, want %s", v, f.Reasons[v], name)
				}
			}
		})
	}
}

func TestFormatWithoutReason(t *testing.T) {
	// A kernel before 5.17: kfree_skb has no reason (4.19's format).
	const old = `name: kfree_skb
ID: 1200
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:void * skbaddr;	offset:8;	size:8;	signed:0;
	field:void * location;	offset:16;	size:8;	signed:0;
	field:unsigned short protocol;	offset:24;	size:2;	signed:0;

print fmt: "skbaddr=%p protocol=%u location=%p", REC->skbaddr, REC->protocol, REC->location
`
	f, err := ParseFormat(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RecordOf(f); err == nil || !strings.Contains(err.Error(), "5.17") {
		t.Errorf("RecordOf = %v, want an error naming 5.17", err)
	}
	for _, bad := range []string{"", "name: x\n", "field:int x;\toffset:zz;\tsize:4;\n"} {
		if _, err := ParseFormat(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseFormat(%q) = nil error", bad)
		}
	}
	// A field of the wrong size is refused rather than read wrong.
	f.Fields = append(f.Fields, Field{Name: "reason", Type: "enum skb_drop_reason", Offset: 26, Size: 2})
	if _, err := RecordOf(f); err == nil {
		t.Error("a 2-byte reason was accepted")
	}
}

func loadPruned(t *testing.T, release string) *btf.Spec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "btf-"+release+".btf"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestBTFOfBothKernels(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.release, func(t *testing.T) {
			l, err := LayoutFromBTF(loadPruned(t, k.release))
			if err != nil {
				t.Fatal(err)
			}
			if l.Args == nil || *l.Args != k.args {
				t.Errorf("args = %+v, want %+v", l.Args, k.args)
			}
			if l.Chase == nil {
				t.Fatalf("no chase: %v", l.ChaseErr)
			}
			// BTF and tracefs name the reasons of one kernel alike.
			f := readFormatFile(t, k.release)
			if diff := cmp.Diff(f.Reasons, l.Reasons); diff != "" {
				t.Errorf("BTF reasons differ from the format file's (-format +btf):\n%s", diff)
			}
		})
	}
}

func TestBTFWithoutDropReasons(t *testing.T) {
	b, err := btf.NewBuilder([]btf.Type{&btf.Int{Name: "int", Size: 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LayoutFromBTF(spec); err == nil || !strings.Contains(err.Error(), "skb_drop_reason") {
		t.Errorf("LayoutFromBTF = %v, want an error naming skb_drop_reason", err)
	}
}

// TestRecordBTF writes the pruned BTF of the running kernel (with -record-btf).
func TestRecordBTF(t *testing.T) {
	if *recordBTF == "" {
		t.Skip("-record-btf DIR records this kernel's BTF")
	}
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := prune(spec)
	if err != nil {
		t.Fatal(err)
	}
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(*recordBTF, "btf-"+strings.TrimSpace(string(release))+".btf")
	if err := os.WriteFile(name, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", name, len(raw))
}

// prune keeps of a kernel's BTF what LayoutFromBTF reads: enum
// skb_drop_reason, btf_trace_kfree_skb's prototype and the members of the
// namespace chase, at the kernel's offsets (nested anonymous members
// flattened into their struct).
func prune(spec *btf.Spec) ([]byte, error) {
	l, err := LayoutFromBTF(spec)
	if err != nil {
		return nil, err
	}
	if l.Chase == nil {
		return nil, l.ChaseErr
	}
	c := l.Chase
	var enum *btf.Enum
	if err := spec.TypeByName("skb_drop_reason", &enum); err != nil {
		return nil, err
	}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	one := func(name, member string, typ btf.Type, off, size uint32) *btf.Struct {
		return &btf.Struct{Name: name, Size: off + size, Members: []btf.Member{{Name: member, Type: typ, Offset: btf.Bits(8 * off)}}}
	}
	netns := &btf.Struct{Name: "net", Members: []btf.Member{{Name: "ns", Type: one("ns_common", "inum", u32, c.NetInum, 4)}}, Size: c.NetInum + 4}
	possible := one("", "net", &btf.Pointer{Target: netns}, 0, 8)
	dev := &btf.Struct{Name: "net_device", Size: max(c.DevIfindex+4, c.DevNet+8), Members: []btf.Member{
		{Name: "ifindex", Type: i32, Offset: btf.Bits(8 * c.DevIfindex)},
		{Name: "nd_net", Type: possible, Offset: btf.Bits(8 * c.DevNet)},
	}}
	sock := &btf.Struct{Name: "sock", Size: c.SockNet + 8, Members: []btf.Member{
		{Name: "__sk_common", Type: &btf.Struct{Name: "sock_common", Size: c.SockNet + 8, Members: []btf.Member{{Name: "skc_net", Type: possible, Offset: btf.Bits(8 * c.SockNet)}}}},
	}}
	skb := &btf.Struct{Name: "sk_buff", Size: max(c.SkbDev, c.SkbSk) + 8, Members: []btf.Member{
		{Name: "dev", Type: &btf.Pointer{Target: dev}, Offset: btf.Bits(8 * c.SkbDev)},
		{Name: "sk", Type: &btf.Pointer{Target: sock}, Offset: btf.Bits(8 * c.SkbSk)},
	}}
	var td *btf.Typedef
	if err := spec.TypeByName("btf_trace_kfree_skb", &td); err != nil {
		return nil, err
	}
	proto := btf.UnderlyingType(td.Type).(*btf.Pointer).Target.(*btf.FuncProto)
	params := []btf.FuncParam{}
	for _, p := range proto.Params {
		typ := btf.Type(&btf.Pointer{Target: &btf.Void{}})
		switch t := btf.UnderlyingType(p.Type).(type) {
		case *btf.Enum:
			typ = enum
		case *btf.Pointer:
			if s, ok := btf.UnderlyingType(t.Target).(*btf.Struct); ok {
				switch s.Name {
				case "sk_buff":
					typ = &btf.Pointer{Target: skb}
				case "sock":
					typ = &btf.Pointer{Target: sock}
				}
			}
		}
		params = append(params, btf.FuncParam{Name: p.Name, Type: typ})
	}
	trace := &btf.Typedef{Name: "btf_trace_kfree_skb", Type: &btf.Pointer{Target: &btf.FuncProto{Return: &btf.Void{}, Params: params}}}
	b, err := btf.NewBuilder([]btf.Type{trace, enum, skb}, nil)
	if err != nil {
		return nil, err
	}
	return b.Marshal(nil, nil)
}
