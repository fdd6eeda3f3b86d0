package fleet

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// An inventory is someone else's text, and reading it is bounded by what it
// costs, not by its size on disk: a 283-byte YAML file whose one range named
// 100,000 hosts cost 342 MB and 4 s, and a directory of 66 symbolic links,
// two a level 21 levels deep, was walked along each of its 2²¹ paths for
// 26 to 120 s. Each bound below is one clear error line.

// maxWork bounds the steps of reading and resolving an inventory: each
// variable copied to a host and each group a host is in, directly or by
// ancestry, and each directory entry listed. A fleet of 10,000 hosts with
// 100 variables each takes 10⁶; 10,000 hosts under 50,000 [all:vars] would
// take 5·10⁸, and a chain of 20,000 nested groups 2·10⁸.
const maxWork = 1_000_000

// charge counts n steps of work against maxWork.
func (inv *inventory) charge(n int) error {
	inv.work += n
	if inv.work > maxWork {
		return fmt.Errorf("the inventory takes more than %d steps to resolve (hosts × their variables and groups)", maxWork)
	}
	return nil
}

// Bytes read: one inventory file, and every inventory and variable file of
// all sources together.
const (
	maxFileBytes = 8 << 20
	maxReadBytes = 32 << 20
)

// bounded is r counting what it gives against maxFileBytes and maxReadBytes.
func (inv *inventory) bounded(r io.Reader, path string) io.Reader {
	return &countingReader{r: r, inv: inv, path: path}
}

type countingReader struct {
	r    io.Reader
	inv  *inventory
	path string
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.inv.bytes += int64(n)
	switch {
	case c.n > maxFileBytes:
		return n, fmt.Errorf("%s is larger than %d MiB, more than an inventory file may be", c.path, maxFileBytes>>20)
	case c.inv.bytes > maxReadBytes:
		return n, fmt.Errorf("the inventory's files are larger than %d MiB together, more than wgperf reads", maxReadBytes>>20)
	}
	return n, err
}

// Directory walks: how deep below a source directory, and how many entries
// in all.
const (
	maxDirDepth   = 8
	maxDirEntries = 10_000
)

// enterDir records dir, depth levels below its source, as read: a
// directory deeper than maxDirDepth, or read before (a symbolic link back
// up is a cycle; two links to one directory would read it twice, and a
// tree of them once per path), is refused.
func (inv *inventory) enterDir(dir string, depth int) error {
	if depth > maxDirDepth {
		return fmt.Errorf("inventory: %s: more than %d directories deep", dir, maxDirDepth)
	}
	self, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("inventory: %v", err)
	}
	for _, seen := range inv.dirs {
		if os.SameFile(seen, self) {
			return fmt.Errorf("inventory: %s: a directory reached a second time (through a symbolic link): wgperf reads each once and follows no cycle", dir)
		}
	}
	inv.dirs = append(inv.dirs, self)
	return nil
}

// countEntry counts one directory entry against maxDirEntries.
func (inv *inventory) countEntry(dir string) error {
	if inv.entries++; inv.entries > maxDirEntries {
		return fmt.Errorf("inventory: %s: more than %d directory entries in all", dir, maxDirEntries)
	}
	return nil
}

// readDirNames lists dir's names in order, refusing one of more than room
// entries without listing them all.
func readDirNames(dir string, room int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(max(room, 0) + 1)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(names) > room {
		return nil, fmt.Errorf("%s: more than %d directory entries in all", dir, maxDirEntries)
	}
	sort.Strings(names)
	return names, nil
}
