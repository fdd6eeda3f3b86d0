package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// A router fleet (issue 54): many small OpenWrt-like routers, each its own
// network namespace "wgl-NAME-fN" with its own dropbear on port 22 and a
// BusyBox userland with wg and nft (the router node's, router.go), all on one
// bridge in namespace "wgl-NAME-hub" (10.200.0.0/16) from where ssh reaches
// them. Each router's WireGuard state is served by one process for the whole
// fleet (fleetwg.go): a node costs one dropbear, a namespace and a veth pair.
// "lab down NAME" removes a fleet as it removes any lab, by its names.

// FleetConfig describes a fleet to start.
type FleetConfig struct {
	Name  string // the lab name (1-8 of [a-z0-9])
	Count int    // routers wanted
	Peers int    // WireGuard peers per router (default 3)
	// DeadPct and SlowPct are the percent of the routers (evenly spread)
	// that drop every packet (an unreachable router: ssh waits its
	// connect timeout) or answer wg slowly (SlowBy each "wg show").
	DeadPct, SlowPct int
	SlowBy           time.Duration
	// MaxTime bounds the start; MinFreeMiB is the memory left free: the
	// fleet stops growing at either.
	MaxTime    time.Duration
	MinFreeMiB int
}

// Fleet is a started fleet, as saved in its folder's fleet.json.
type Fleet struct {
	Name      string   `json:"name"`
	Wanted    int      `json:"wanted"`
	Count     int      `json:"count"`
	Limit     string   `json:"limit"` // what stopped it growing
	Specs     []string `json:"specs"` // ssh:root@ADDR, router i at Specs[i-1]
	Dead      []int    `json:"dead,omitempty"`
	Slow      []int    `json:"slow,omitempty"`
	Seconds   float64  `json:"seconds"`
	KiBa      int      `json:"kib_per_router"` // memory a router took (MemAvailable's fall / Count)
	Inventory string   `json:"inventory"`
	SSHConfig string   `json:"ssh_config"`
}

// FleetDir is a fleet's state folder.
func FleetDir(name string) string { return filepath.Join(StateDir, name) }

func fleetNode(i int) string { return "f" + strconv.Itoa(i) }

// FleetAddr is router i's address (i from 1).
func FleetAddr(i int) string { return fmt.Sprintf("10.200.%d.%d", (i-1)/250, (i-1)%250+1) }

// FleetHub is the namespace ssh reaches the routers from.
func FleetHub(name string) string { return Netns(name, "hub") }

// FleetSSH are the ssh settings that reach the routers: the command (in the
// hub namespace) and the -o options (the fleet's key, its known_hosts).
func (f *Fleet) FleetSSH() (command, options []string) {
	dir := FleetDir(f.Name)
	return []string{"ip", "netns", "exec", FleetHub(f.Name), "ssh"},
		[]string{"IdentityFile=" + filepath.Join(dir, "id_ed25519"), "IdentitiesOnly=yes",
			"UserKnownHostsFile=" + filepath.Join(dir, "known_hosts"), "StrictHostKeyChecking=yes", "LogLevel=ERROR"}
}

// LoadFleet reads a started fleet's fleet.json.
func LoadFleet(name string) (*Fleet, error) {
	b, err := os.ReadFile(filepath.Join(FleetDir(name), "fleet.json"))
	if err != nil {
		return nil, fmt.Errorf("fleet %q is not up", name)
	}
	var f Fleet
	return &f, json.Unmarshal(b, &f)
}

// FleetUp starts a fleet: as many of cfg.Count routers as the machine holds
// (memory above MinFreeMiB, processes, MaxTime), the UAPI server, the
// inventory and ssh_config. exe is the wgperf binary (it serves the UAPI).
func FleetUp(ctx context.Context, cfg FleetConfig, exe string) (*Fleet, error) {
	if !validName.MatchString(cfg.Name) {
		return nil, fmt.Errorf("lab name %q: want 1-8 lowercase letters or digits", cfg.Name)
	}
	if cfg.Count < 1 || cfg.Count > 60000 {
		return nil, fmt.Errorf("fleet: --count %d: want 1 to 60000", cfg.Count)
	}
	if cfg.DeadPct < 0 || cfg.SlowPct < 0 || cfg.DeadPct+cfg.SlowPct > 50 {
		return nil, fmt.Errorf("fleet: --dead %d%% and --slow %d%%: want 0 to 50%% together", cfg.DeadPct, cfg.SlowPct)
	}
	if cfg.Peers <= 0 {
		cfg.Peers = 3
	}
	if cfg.SlowBy <= 0 {
		cfg.SlowBy = 5 * time.Second
	}
	if cfg.MaxTime <= 0 {
		cfg.MaxTime = 10 * time.Minute
	}
	if cfg.MinFreeMiB <= 0 {
		cfg.MinFreeMiB = 2048
	}
	if names, _ := List(ctx); containsString(names, cfg.Name) {
		return nil, fmt.Errorf("lab %s is up: wgperf lab down --name %s first", cfg.Name, cfg.Name)
	}
	dir := FleetDir(cfg.Name)
	f := &Fleet{Name: cfg.Name, Wanted: cfg.Count, Inventory: filepath.Join(dir, "inventory.ini"), SSHConfig: filepath.Join(dir, "ssh_config")}
	fail := func(err error) (*Fleet, error) {
		_ = Down(context.WithoutCancel(ctx), cfg.Name)
		return nil, err
	}
	if err := fleetFiles(ctx, dir); err != nil {
		return fail(err)
	}
	hub := target.Netns(FleetHub(cfg.Name))
	host := target.Local()
	if out, err := host.Run(ctx, "ip", "netns", "add", FleetHub(cfg.Name)); err != nil {
		return fail(fmt.Errorf("fleet hub: %v: %s", err, out))
	}
	if err := ipBatch(ctx, hub, "link set lo up", "link add br0 type bridge", "addr add 10.200.255.254/16 dev br0", "link set br0 up"); err != nil {
		return fail(err)
	}
	start := time.Now()
	memBefore := memAvailableKiB()
	f.Limit = fmt.Sprintf("--count %d", cfg.Count)
	for i := 1; i <= cfg.Count; i++ {
		if why := fleetRoom(cfg, start); why != "" {
			f.Limit = why
			break
		}
		if err := fleetRouter(ctx, cfg.Name, dir, i); err != nil {
			if i == 1 {
				return fail(err)
			}
			f.Limit = "router " + fleetNode(i) + ": " + err.Error()
			break
		}
		f.Count = i
		f.Specs = append(f.Specs, "ssh:root@"+FleetAddr(i))
	}
	f.Dead, f.Slow = fleetPick(f.Count, cfg.DeadPct, 0), fleetPick(f.Count, cfg.SlowPct, 1)
	for _, i := range f.Dead {
		rules := "table inet fleet_dead {\n chain in {\n  type filter hook input priority -300; policy drop;\n }\n}\n"
		if out, err := target.Netns(Netns(cfg.Name, fleetNode(i))).RunInput(ctx, []byte(rules), "nft", "-f", "-"); err != nil {
			return fail(fmt.Errorf("fleet: make %s unreachable: %v: %s", fleetNode(i), err, out))
		}
	}
	args := []string{"lab", "_fleetwg", "--dir", dir, "--count", strconv.Itoa(f.Count), "--peers", strconv.Itoa(cfg.Peers), "--slow-by", cfg.SlowBy.String()}
	for _, i := range f.Slow {
		args = append(args, "--slow", strconv.Itoa(i))
	}
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 & echo $!", nodeSession(exe, args...), shell.Join(filepath.Join(dir, "fleetwg.log")))
	out, err := hub.Run(ctx, "sh", "-c", script)
	if err != nil {
		return fail(fmt.Errorf("fleet: start the WireGuard state server: %v: %s", err, out))
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	last := fleetWGSocket(dir, f.Count)
	if err := (&Lab{Config: Config{Name: cfg.Name}}).waitFor(func() bool { _, err := os.Stat(last); return err == nil },
		pid, "the fleet's WireGuard state server", filepath.Join(dir, "fleetwg.log")); err != nil {
		return fail(err)
	}
	f.Seconds = time.Since(start).Seconds()
	if drop := memBefore - memAvailableKiB(); drop > 0 {
		f.KiBa = drop / f.Count
	}
	if err := f.writeInventory(dir); err != nil {
		return fail(err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fail(err)
	}
	return f, os.WriteFile(filepath.Join(dir, "fleet.json"), b, 0o644)
}

// fleetRoom says what stops the fleet growing now, or "" when it may.
func fleetRoom(cfg FleetConfig, start time.Time) string {
	if time.Since(start) > cfg.MaxTime {
		return fmt.Sprintf("time: --max-time %s", cfg.MaxTime)
	}
	if free := memAvailableKiB() / 1024; free > 0 && free < cfg.MinFreeMiB {
		return fmt.Sprintf("memory: %d MiB available, under --min-free %d MiB", free, cfg.MinFreeMiB)
	}
	if n, max := processCount(), readInt("/proc/sys/kernel/pid_max"); max > 0 && n > max*9/10 {
		return fmt.Sprintf("processes: %d of pid_max %d", n, max)
	}
	return ""
}

// fleetPick spreads pct percent of n routers evenly, shifted by half a
// stride for the second set so dead and slow ones never coincide.
func fleetPick(n, pct, set int) []int {
	if pct <= 0 {
		return nil
	}
	stride := 100 / pct
	var out []int
	for i := 1; i <= n; i++ {
		if i%stride == (set*stride/2)%stride {
			out = append(out, i)
		}
	}
	return out
}

// fleetRouter makes router i: its namespace, its veth to the hub's bridge,
// its wg0 (a TUN device with no process on it, as wireguard-go's is), and dropbear in a mount namespace where the fleet's
// userland is /usr, /etc and /root and the UAPI socket folder its own.
func fleetRouter(ctx context.Context, name, dir string, i int) error {
	node := fleetNode(i)
	ns := Netns(name, node)
	host := target.Local()
	if out, err := host.Run(ctx, "ip", "netns", "add", ns); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	hub := target.Netns(FleetHub(name))
	if err := ipBatch(ctx, hub, "link add "+node+" type veth peer name eth0 netns "+ns, "link set "+node+" master br0 up"); err != nil {
		return err
	}
	if err := ipBatch(ctx, target.Netns(ns), "link set lo up", "addr add "+FleetAddr(i)+"/16 dev eth0", "link set eth0 up",
		"tuntap add dev wg0 mode tun", fmt.Sprintf("addr add 10.201.%d.%d/16 dev wg0", (i-1)/250, (i-1)%250+1), "link set wg0 mtu 1420 up"); err != nil {
		return err
	}
	wgDir := filepath.Dir(fleetWGSocket(dir, i))
	if err := os.MkdirAll(wgDir, 0o755); err != nil {
		return err
	}
	fsRoot := filepath.Join(dir, "root")
	bind := func(from, to string) string { return shell.Join("/usr/bin/mount", "--bind", from, to) }
	inner := strings.Join([]string{
		"set -e",
		bind(filepath.Join(fsRoot, "etc"), "/etc"), bind(filepath.Join(fsRoot, "root"), "/root"),
		shell.Join("/usr/bin/mount", "-t", "tmpfs", "-o", "mode=1777,size=1m", "tmpfs", "/tmp"),
		"mkdir -p /run/wireguard", bind(wgDir, "/run/wireguard"),
		shell.Join("/usr/bin/mount", "-t", "tmpfs", "-o", "mode=0755,size=1m", "tmpfs", "/var"),
		"mkdir -p /var/lib /var/log /var/lock && ln -s /run /var/run",
		bind(filepath.Join(fsRoot, "usr/local"), "/usr/local"), bind(filepath.Join(fsRoot, "usr/share"), "/usr/share"),
		bind(filepath.Join(fsRoot, "usr/sbin"), "/usr/sbin"), bind(filepath.Join(fsRoot, "usr/bin"), "/usr/bin"),
		shell.Join("exec", "/usr/sbin/dropbear", "-F", "-E", "-s", "-p", "22", "-r", "/etc/dropbear/dropbear_ed25519_host_key"),
	}, "\n")
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 &", nodeSession("unshare", "-m", "--propagation", "private", "sh", "-c", inner),
		shell.Join(filepath.Join(dir, "dropbear.log")))
	if out, err := target.Netns(ns).Run(ctx, "sh", "-c", script); err != nil {
		return fmt.Errorf("dropbear: %v: %s", err, out)
	}
	return nil
}

// fleetFiles writes what every router shares: the BusyBox userland with wg,
// nft and dropbear, /etc, one host key and one user key, known_hosts.
func fleetFiles(ctx context.Context, dir string) error {
	fsRoot := filepath.Join(dir, "root")
	for _, d := range []string{"usr/bin", "usr/sbin", "usr/local", "usr/share", "etc/config", "etc/dropbear", "root/.ssh", "nodes"} {
		if err := os.MkdirAll(filepath.Join(fsRoot, d), 0o755); err != nil {
			return err
		}
	}
	l := &Lab{Config: Config{Name: filepath.Base(dir)}}
	if err := l.routerUserland(ctx, fsRoot); err != nil {
		return err
	}
	if err := l.routerEtc(ctx, dir, fsRoot); err != nil {
		return err
	}
	network := "\nconfig interface 'wan'\n\toption device 'eth0'\n\toption proto 'static'\n\toption netmask '255.255.0.0'\n" +
		"\nconfig interface 'wg0'\n\toption proto 'wireguard'\n\toption listen_port '51820'\n"
	if err := os.WriteFile(filepath.Join(fsRoot, "etc/config/network"), []byte(network), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o755); err != nil {
		return err
	}
	// One host key for the fleet: a known_hosts line with a pattern trusts it at every address.
	out, err := target.Local().Run(ctx, "dropbearkey", "-y", "-f", filepath.Join(fsRoot, "etc/dropbear/dropbear_ed25519_host_key"))
	if err != nil {
		return fmt.Errorf("dropbearkey -y: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ssh-ed25519 ") {
			f := strings.Fields(line)
			return os.WriteFile(filepath.Join(dir, "known_hosts"), []byte("10.200.*.* "+f[0]+" "+f[1]+"\n"), 0o644)
		}
	}
	return errors.New("dropbearkey -y: no ssh-ed25519 public key")
}

// writeInventory writes the fleet as an Ansible INI inventory (groups fleet,
// dead, slow) and an ssh_config for the exporter's user to Include.
func (f *Fleet) writeInventory(dir string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# wgperf lab fleet %s: %d routers (BusyBox, dropbear, wg), reached over ssh from namespace %s\n[fleet]\n", f.Name, f.Count, FleetHub(f.Name))
	key := filepath.Join(dir, "id_ed25519")
	for i := 1; i <= f.Count; i++ {
		fmt.Fprintf(&b, "%s ansible_host=%s ansible_user=root ansible_ssh_private_key_file=%s\n", fleetNode(i), FleetAddr(i), key)
	}
	for _, g := range []struct {
		name  string
		nodes []int
	}{{"dead", f.Dead}, {"slow", f.Slow}} {
		fmt.Fprintf(&b, "\n[%s]\n", g.name)
		for _, i := range g.nodes {
			b.WriteString(fleetNode(i) + "\n")
		}
	}
	if err := os.WriteFile(f.Inventory, []byte(b.String()), 0o644); err != nil {
		return err
	}
	conf := fmt.Sprintf("# wgperf lab fleet %s: Include this from ~/.ssh/config to reach its routers.\nHost 10.200.*.*\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n",
		f.Name, key, filepath.Join(dir, "known_hosts"))
	return os.WriteFile(f.SSHConfig, []byte(conf), 0o644)
}

// ipBatch runs ip commands in one "ip -batch" in tg's namespace.
func ipBatch(ctx context.Context, tg target.Target, cmds ...string) error {
	if out, err := tg.RunInput(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "ip", "-batch", "-"); err != nil {
		return fmt.Errorf("ip: %v: %s", err, out)
	}
	return nil
}

// memAvailableKiB is /proc/meminfo's MemAvailable (0 when unreadable).
func memAvailableKiB() int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

func processCount() int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

func readInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WriteSummary prints what "lab fleet up" started and how to reach it.
func (f *Fleet) WriteSummary(w io.Writer) error {
	fmt.Fprintf(w, "fleet %s: %d of %d routers up in %.1f s, about %d KiB of memory each; limited by %s\n",
		f.Name, f.Count, f.Wanted, f.Seconds, f.KiBa, f.Limit)
	if len(f.Dead)+len(f.Slow) > 0 {
		fmt.Fprintf(w, "  %d unreachable (group dead), %d answer wg slowly (group slow)\n", len(f.Dead), len(f.Slow))
	}
	fmt.Fprintf(w, "  inventory: %s\n  ssh: Include %s from ~/.ssh/config, run from namespace %s:\n", f.Inventory, f.SSHConfig, FleetHub(f.Name))
	_, err := fmt.Fprintf(w, "  ip netns exec %s wgperf diagnose -i %s -l fleet\n", FleetHub(f.Name), f.Inventory)
	return err
}
