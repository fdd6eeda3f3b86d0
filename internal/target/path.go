package target

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path is the PATH in which every program wgperf runs on a host is found,
// and the PATH those programs (a collection script's sh, ip netns exec)
// pass on: absolute folders only, where an OpenWrt router and Debian or
// Fedora keep their tools. The caller's PATH is not used: a "." or a
// relative entry on root's PATH would run a planted ./nft, ./wg or ./ip.
// Local and netns commands are looked up in it and run with it; an ssh
// target's remote command runs under /usr/bin/env PATH=Path. A test that
// stands in for a host's tools puts its folder first.
var Path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// envProgram runs a remote command with PATH set to Path, in whatever shell
// the ssh login has (env is where every one of those systems keeps it).
const envProgram = "/usr/bin/env"

// lookPath finds name in Path's absolute folders: a regular file someone
// may execute. A name with a slash is used as it is.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(Path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// pathCommand is the command for argv run on this machine (a local or netns
// target): its program found in Path, its environment's PATH set to Path.
func pathCommand(ctx context.Context, argv []string) *exec.Cmd {
	p, err := lookPath(argv[0])
	if err != nil {
		p = argv[0]
	}
	cmd := exec.CommandContext(ctx, p, argv[1:]...)
	cmd.Args[0] = argv[0]
	if err != nil {
		cmd.Err = err
	}
	cmd.Env = append(os.Environ(), "PATH="+Path) // the last value wins
	return cmd
}
