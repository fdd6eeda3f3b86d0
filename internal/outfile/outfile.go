// Package outfile creates the files wgperf writes where its user says
// (collect -o, --html, --iperf3-json), which it often does as root: a
// symbolic link planted at any component of the path, or under the file's
// own name, is never followed, and a directory someone else could swap the
// file in is refused. It is the one way those flags create a file.
package outfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// WriteFile writes data to a new file at path (see Create).
func WriteFile(path string, data []byte, perm uint32) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// Create creates the file at path for writing (CreateIn of its directory
// and name).
func Create(path string, perm uint32) (*os.File, error) {
	dir, name := filepath.Split(path)
	if name == "" || name == "." || name == ".." {
		return nil, fmt.Errorf("%s: not a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	return CreateIn(dir, name, perm)
}

// CreateIn creates name in dir for writing. dir is opened one component at
// a time with O_NOFOLLOW|O_DIRECTORY, so a link at any component, the last
// or one in the middle, is refused rather than followed; it must belong to
// this user or root and be writable by no one else unless sticky (as /tmp
// is, where others may not remove or rename what is not theirs). The file
// is created anew (O_EXCL|O_NOFOLLOW): a link or file planted under its
// name is never written through. An old file of that name in a directory
// only this user can write is replaced; in a sticky one it is refused.
func CreateIn(dir, name string, perm uint32) (*os.File, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, fmt.Errorf("%q: not a file name", name)
	}
	dfd, err := openDir(dir)
	if err != nil {
		return nil, err
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
	path := filepath.Join(dir, name)
	if st.Mode&0o022 == 0 {
		// Only this user can write here: an old result goes.
		if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			if errors.Is(err, unix.EISDIR) {
				return nil, fmt.Errorf("%s: a directory, not a file", path)
			}
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("%s exists, in a directory other users can write: wgperf replaces nothing there (remove it, or write elsewhere)", path)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openDir opens dir following no link: from / (or the working directory,
// for a relative dir) one component at a time, each with O_NOFOLLOW.
func openDir(dir string) (int, error) {
	clean := filepath.Clean(dir)
	start := "."
	if filepath.IsAbs(clean) {
		start = "/"
	}
	fd, err := unix.Open(start, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%s: %v", dir, err)
	}
	walked := strings.TrimSuffix(start, ".")
	for _, c := range strings.Split(clean, "/") {
		if c == "" || c == "." {
			continue
		}
		walked = filepath.Join(walked, c)
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, fmt.Errorf("%s: %s is not a directory (wgperf follows no symbolic link where it writes: name the real directory)", dir, walked)
			}
			return -1, fmt.Errorf("%s: %v", dir, err)
		}
		fd = next
	}
	return fd, nil
}
