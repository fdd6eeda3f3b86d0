package remedy

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// Where a sysctl set at boot comes from, resolved as the system's boot
// resolves it (sysctl.d(5)): systemd-sysctl.service (and procps' "sysctl
// --system") read every *.conf file of SysctlDirs, one per file name (the
// first folder that has a name wins: /etc masks /usr/lib), in the order of
// their names across folders, and the last assignment of a key wins. Debian
// and Fedora read /etc/sysctl.conf through the link /etc/sysctl.d/99-sysctl.conf;
// procps' --system reads it last in any case. OpenWrt's /etc/init.d/sysctl
// (procd, at boot) reads /etc/sysctl.d/*.conf by name, then /etc/sysctl.conf.

// SysctlDirs are the folders systemd-sysctl reads, highest precedence first.
var SysctlDirs = []string{"/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d"}

// sysctlConfFiles are the files wgperf may write, first choice first: the
// second sorts after Debian's and Fedora's 99-sysctl.conf (/etc/sysctl.conf).
var sysctlConfFiles = []string{SysctlConf, SysctlLateConf}

// SysctlLateConf is the file wgperf writes a key to when a file that sorts
// after SysctlConf sets it to another value.
const SysctlLateConf = "/etc/sysctl.d/99-wgperf.conf"

// etcSysctlConf is the old single file.
const etcSysctlConf = "/etc/sysctl.conf"

// SysctlFile is one file the boot may read: its path (without Env.Root) and content.
type SysctlFile struct {
	Path string
	Data string
}

// SysctlListing is what a host's boot reads for sysctls, as recorded on it.
type SysctlListing struct {
	// Systemd is true when systemd runs the host (/run/systemd/system).
	Systemd bool
	// Files are every *.conf file of SysctlDirs that exists, and /etc/sysctl.conf.
	Files []SysctlFile
}

// SysctlBoot is where a key's value at boot comes from, and what wgperf does about it.
type SysctlBoot struct {
	// File is the file wgperf writes the key to; "" when no file of its own can win.
	File string
	// Loader is what reads the files at boot.
	Loader string
	// Over is the file that sets the key after wgperf's first choice
	// (SysctlConf) to another value, OverValue that value ("" when none).
	Over, OverValue string
	// Note says it for the plan: "persists: ..." or "runtime only: ...".
	Note string
}

// bootOrder is the files the boot reads, in order.
func (l SysctlListing) bootOrder(p Platform) []SysctlFile {
	byPath := map[string]SysctlFile{}
	for _, f := range l.Files {
		byPath[f.Path] = f
	}
	var out []SysctlFile
	if p == OpenWrt {
		for _, f := range l.Files {
			if path.Dir(f.Path) == "/etc/sysctl.d" && strings.HasSuffix(f.Path, ".conf") {
				out = append(out, f)
			}
		}
		slices.SortFunc(out, func(a, b SysctlFile) int { return strings.Compare(a.Path, b.Path) })
		if f, ok := byPath[etcSysctlConf]; ok {
			out = append(out, f)
		}
		return out
	}
	byName := map[string]SysctlFile{}
	for _, d := range SysctlDirs {
		for _, f := range l.Files {
			name := path.Base(f.Path)
			if path.Dir(f.Path) != d || !strings.HasSuffix(name, ".conf") {
				continue
			}
			if _, ok := byName[name]; !ok {
				byName[name] = f
			}
		}
	}
	for _, name := range sortedNames(byName) {
		out = append(out, byName[name])
	}
	if f, ok := byPath[etcSysctlConf]; ok && !l.Systemd {
		out = append(out, f) // procps' sysctl --system reads it last
	}
	return out
}

func sortedNames(m map[string]SysctlFile) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// loader names what reads the files at boot.
func (l SysctlListing) loader(p Platform) string {
	switch {
	case p == OpenWrt:
		return "/etc/init.d/sysctl (procd)"
	case l.Systemd:
		return "systemd-sysctl.service"
	}
	return "sysctl --system (procps' init script)"
}

// sysctlAssigns returns the value the last line of data assigning key sets,
// and whether one does. Keys are read as systemd-sysctl reads them: "/" or "."
// separated (the first separator decides), a leading "-" (ignore errors)
// dropped, a glob pattern matched against key.
func sysctlAssigns(data, key string) (string, bool) {
	var val string
	found := false
	for _, l := range strings.Split(data, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k = sysctlNormalize(strings.TrimPrefix(strings.TrimSpace(k), "-"))
		if k == key || (strings.ContainsAny(k, "*?[") && globMatch(k, key)) {
			val, found = normSysctl(v), true
		}
	}
	return val, found
}

func globMatch(pattern, key string) bool {
	// path.Match treats "/" as a separator; dotted keys have none.
	ok, err := path.Match(pattern, key)
	return err == nil && ok
}

// sysctlNormalize turns "net/core/rmem_max" into "net.core.rmem_max"; with
// "/" as separator a "." is part of a name (net/ipv4/conf/eth0.100/rp_filter
// is net.ipv4.conf.eth0/100.rp_filter).
func sysctlNormalize(k string) string {
	i := strings.IndexAny(k, "./")
	if i < 0 || k[i] == '.' {
		return k
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return '.'
		case '.':
			return '/'
		}
		return r
	}, k)
}

// ResolveSysctl decides which of wgperf's files makes key = value last at
// boot on a host with listing l: SysctlConf unless a file read after it sets
// key to another value; then SysctlLateConf when that sorts after every such
// file; else none ("runtime only", naming the file that wins). It is pure.
func ResolveSysctl(l SysctlListing, p Platform, key, value string) SysctlBoot {
	b := SysctlBoot{Loader: l.loader(p)}
	candidates := sysctlConfFiles
	if p == OpenWrt {
		candidates = sysctlConfFiles[:1] // /etc/sysctl.conf is read after any name
	}
	for i, c := range candidates {
		over, overVal := lastOverride(l, p, c, key, value)
		if i == 0 {
			b.Over, b.OverValue = over, overVal
		}
		if over == "" {
			b.File = c
			break
		}
	}
	n := len(l.bootOrder(p))
	switch {
	case b.File == SysctlConf:
		b.Note = fmt.Sprintf("persists: %s sets %s last of the %d sysctl files %s reads at boot (sysctl.d(5): by file name across %s; the last assignment wins)",
			SysctlConf, key, max(n, 1), b.Loader, sysctlDirsText(p))
	case b.File != "":
		b.Note = fmt.Sprintf("persists: %s, not %s: %s sets %s = %s after it, and %s sorts after that file, so %s sets %s last at boot",
			b.File, path.Base(SysctlConf), foreign(b.Over), key, foreign(b.OverValue), path.Base(b.File), b.Loader, value)
	default:
		b.Note = fmt.Sprintf("runtime only: %s sets %s = %s after any file wgperf writes (%s reads it last at boot); change the line there to keep %s at boot",
			foreign(b.Over), key, foreign(b.OverValue), b.Loader, value)
	}
	return b
}

// lastOverride is the last file the boot reads after file (wgperf's) that
// sets key to a value other than value, and that value; "" when none.
func lastOverride(l SysctlListing, p Platform, file, key, value string) (string, string) {
	order := l.bootOrder(p)
	own := SysctlFile{Path: file}
	at := -1
	for i, f := range order {
		if f.Path == file {
			at = i
		}
	}
	if at < 0 {
		// wgperf's file does not exist yet: put it where its name sorts.
		with := SysctlListing{Systemd: l.Systemd, Files: append(slices.Clone(l.Files), own)}
		order = with.bootOrder(p)
		at = slices.IndexFunc(order, func(f SysctlFile) bool { return f.Path == file })
		if at < 0 {
			// masked by a file of the same name elsewhere: cannot happen for /etc
			return "", ""
		}
	}
	var over, overVal string
	for _, f := range order[at+1:] {
		if v, ok := sysctlAssigns(f.Data, key); ok {
			if v != value {
				over, overVal = f.Path, v
			} else {
				over, overVal = "", ""
			}
		}
	}
	return over, overVal
}

func sysctlDirsText(p Platform) string {
	if p == OpenWrt {
		return "/etc/sysctl.d, then /etc/sysctl.conf"
	}
	return "/etc, /run, /usr/local/lib, /usr/lib and /lib/sysctl.d"
}

// foreign shows text read from a file wgperf did not write: one printable
// shell word.
func foreign(s string) string { return shell.Quote(shell.Comment(s)) }

// sysctlListScript prints the *.conf files of the folders given as
// arguments and /etc/sysctl.conf (with Root), one a line, then "systemd"
// when systemd runs the host.
const sysctlListScript = `etc=$1; run=$2; shift 2
for d in "$@"; do
	for f in "$d"/*.conf; do [ -f "$f" ] && printf 'file %s\n' "$f"; done
done
[ -f "$etc" ] && printf 'file %s\n' "$etc"
[ -d "$run" ] && echo systemd
exit 0`

// SysctlListLine is the shell line that lists what env's boot reads for sysctls.
func SysctlListLine(env *Env) string { return shell.Join("sh", sysctlListArgs(env)...) }

func sysctlListArgs(env *Env) []string {
	args := []string{"-c", sysctlListScript, "sh", env.Path(etcSysctlConf), env.Path("/run/systemd/system")}
	for _, d := range SysctlDirs {
		args = append(args, env.Path(d))
	}
	return args
}

// readSysctlListing records the host's sysctl files (files an earlier step of
// the same plan writes included).
func readSysctlListing(ctx context.Context, env *Env) (SysctlListing, error) {
	out, err := env.T.Run(ctx, "sh", sysctlListArgs(env)...)
	if err != nil {
		return SysctlListing{}, fmt.Errorf("list sysctl.d: %w", err)
	}
	var l SysctlListing
	seen := map[string]bool{}
	add := func(onTarget string) error {
		p := env.unroot(onTarget)
		if seen[p] || (p != etcSysctlConf && (!slices.Contains(SysctlDirs, path.Dir(p)) || !strings.HasSuffix(p, ".conf"))) {
			return nil // a name with a newline in it: not one the boot reads
		}
		seen[p] = true
		data, _, existed, err := env.readFile(ctx, onTarget)
		if err != nil {
			if ok, err2 := env.exists(ctx, onTarget); err2 == nil && !ok {
				return nil // removed since it was listed
			}
			return err
		}
		if existed {
			l.Files = append(l.Files, SysctlFile{Path: p, Data: string(data)})
		}
		return nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case line == "systemd":
			l.Systemd = true
		case strings.HasPrefix(line, "file "):
			if err := add(strings.TrimPrefix(line, "file ")); err != nil {
				return SysctlListing{}, err
			}
		}
	}
	for _, f := range sysctlConfFiles {
		if _, planned := env.overlay[env.Path(f)]; planned {
			if err := add(env.Path(f)); err != nil {
				return SysctlListing{}, err
			}
		}
	}
	return l, nil
}

// unroot is the absolute path p names on the target without Root.
func (e *Env) unroot(p string) string {
	if e.Root == "" || e.Root == "/" {
		return p
	}
	if r, ok := strings.CutPrefix(p, strings.TrimSuffix(e.Root, "/")); ok && strings.HasPrefix(r, "/") {
		return r
	}
	return p
}
