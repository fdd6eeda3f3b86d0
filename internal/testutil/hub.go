package testutil

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hub of a real lab: 'wgperf lab up --hub-rate 100 --wireguard userspace'
// with a default route added on R, recorded in R's namespace
// (testdata/collect/wg/dump-lab-hub, and R's ip outputs in testdata/collect/hub).
// Its two spokes, A and B, shook hands at HubRecorded.
const (
	HubInterface = "wg-mpeer-r"
	HubDumpFile  = "dump-lab-hub"
)

// HubRecorded is when the hub's dump was taken (its spokes' latest handshake,
// a few seconds before).
var HubRecorded = time.Unix(1796178190, 0).UTC()

// HubDump is "wg show all dump" of a hub with many road warriors: the lab
// hub's recorded dump (its two live spokes first) and extra more peers, none
// online, as a hub whose users went home looks. Peer i of the extra ones has a
// valid key of its own (base64 of 32 bytes derived from i), an endpoint of its
// own in 198.18.0.0/15 on a NAT-rebound port, a /32 in 10.78.0.0/16 and a
// handshake older than 3 minutes at HubRecorded: 4 min plus i×97 s, or never
// for every tenth. Every fifth keeps a persistent keepalive (a site expected
// up); the others are idle, as road warriors without keepalive are.
func HubDump(t testing.TB, extra int) []byte {
	t.Helper()
	var b strings.Builder
	b.Write(ReadTestdata(t, "collect", "wg", HubDumpFile))
	for i := range extra {
		p := HubPeer(i)
		hs := int64(0)
		if !p.Never {
			hs = p.Handshake.Unix()
		}
		keepalive := "off"
		if p.Keepalive > 0 {
			keepalive = fmt.Sprint(p.Keepalive)
		}
		fmt.Fprintf(&b, "%s\t%s\t(none)\t%s\t%s\t%d\t%d\t%d\t%s\n", HubInterface, p.Key, p.Endpoint, p.AllowedIP, hs, p.Rx, p.Tx, keepalive)
	}
	return []byte(b.String())
}

// GeneratedPeer is one of HubDump's extra peers.
type GeneratedPeer struct {
	Key, Endpoint, AllowedIP string
	Handshake                time.Time // zero when Never
	Never                    bool
	Keepalive                int
	Rx, Tx                   uint64
}

// HubPeer is HubDump's extra peer i.
func HubPeer(i int) GeneratedPeer {
	sum := sha256.Sum256([]byte(fmt.Sprintf("wgperf hub peer %d", i)))
	p := GeneratedPeer{
		Key:       base64.StdEncoding.EncodeToString(sum[:]),
		Endpoint:  fmt.Sprintf("198.%d.%d.%d:%d", 18+i/65024, i/254%256, i%254+1, 1024+(i*7919)%64000),
		AllowedIP: fmt.Sprintf("10.78.%d.%d/32", i/254%256, i%254+1),
		Handshake: HubRecorded.Add(-4*time.Minute - time.Duration(i)*97*time.Second),
		Rx:        uint64(i%13) * 92,
		Tx:        uint64(i%13)*92 + 148,
	}
	if i%10 == 9 {
		p.Handshake, p.Never, p.Rx, p.Tx = time.Time{}, true, 0, 0
	}
	if i%5 == 0 {
		p.Keepalive = 25
	}
	return p
}

// hubKernel is the kernel the lab hub ran on (uname -r).
const hubKernel = "6.18.44-fc-v1098"

// HubTools are the stand-ins for uname, wg and ip of a host that answers as the lab
// hub with extra generated peers (HubDump): wg prints the dump, ip prints R's
// recorded JSON (testdata/collect/hub) and, for any address, alone or in
// batch mode, the route R took to 198.18.0.1 (via its uplink's gateway). Hand them to
// targettest.InShell; every other program is missing, as on a bare host.
func HubTools(t testing.TB, extra int) map[string]string {
	t.Helper()
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump")
	if err := os.WriteFile(dump, HubDump(t, extra), 0o600); err != nil {
		t.Fatal(err)
	}
	hub := Testdata("collect", "hub")
	file := func(name string) string { return cat + " '" + filepath.Join(hub, name) + "'" }
	return map[string]string{
		"uname": "#!/bin/sh\necho " + hubKernel + "\n",
		"wg":    "#!/bin/sh\n[ \"$*\" = 'show all dump' ] || { echo \"Invalid subcommand: $*\" >&2; exit 1; }\nexec " + cat + " '" + dump + "'\n",
		"ip": `#!/bin/sh
case "$*" in
"-j link show dev lo") exit 0 ;;
"-s -s -j -d link show") exec ` + file("ip-link.json") + ` ;;
"-j -4 route show table all") exec ` + file("route4.json") + ` ;;
"-j -6 route show table all") exec ` + file("route6.json") + ` ;;
"-j -4 rule show") exec ` + file("rule4.json") + ` ;;
"-j -6 rule show") exec ` + file("rule6.json") + ` ;;
"-j -force -batch -") while read -r _ _ a; do printf '[{"dst":"%s","gateway":"198.51.100.2","dev":"eth-a","prefsrc":"198.51.100.1","flags":[],"uid":0,"cache":[]}]\n' "$a"; done ;;
"-j route get "*) printf '[{"dst":"%s","gateway":"198.51.100.2","dev":"eth-a","prefsrc":"198.51.100.1","flags":[],"uid":0,"cache":[]}]\n' "$4" ;;
*) echo "Object \"$1\" is unknown, try \"ip help\"." >&2; exit 1 ;;
esac
`,
	}
}
