package bench

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// createInDir creates name in dir for writing, as root may in a directory a
// user named: dir itself is not followed if it is a link, it must belong to
// this user or root and be writable by no one else unless sticky (as /tmp
// is, where others may not remove or rename what is not theirs), and the
// file is created anew (O_EXCL|O_NOFOLLOW): a link or file someone planted
// under its name is never written through. An old file of that name in a
// directory only this user can write is replaced.
func createInDir(dir, name string, perm uint32) (*os.File, error) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%s: not a directory (a link is not followed)", dir)
		}
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	if me := uint32(os.Geteuid()); st.Uid != me && st.Uid != 0 {
		return nil, fmt.Errorf("%s belongs to user %d, who could swap what is written there: use a directory of your own", dir, st.Uid)
	}
	sticky := st.Mode&unix.S_ISVTX != 0
	if st.Mode&0o022 != 0 && !sticky {
		return nil, fmt.Errorf("%s is writable by other users (mode %04o) without the sticky bit: they could plant links where wgperf writes; use a directory only you can write", dir, st.Mode&0o7777)
	}
	if !sticky || st.Mode&0o022 == 0 {
		// Only this user can write here: an old result goes.
		if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("%s/%s: %v", dir, name, err)
		}
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %v", dir, name, err)
	}
	return os.NewFile(uintptr(fd), dir+"/"+name), nil
}
