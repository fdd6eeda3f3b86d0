package packaging

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// The readers of the release's archives and packages: tar.gz, ar (.deb),
// rpm (its cpio payload), and Debian control fields.

// entry is one file read from an archive.
type entry struct {
	data []byte
	mode int64
	ok   bool
}

func checkFile(t *testing.T, where, path string, got entry, want []byte) {
	t.Helper()
	if !got.ok {
		t.Errorf("%s: no %s", where, path)
	} else if !bytes.Equal(got.data, want) {
		t.Errorf("%s: %s differs from the repository's", where, path)
	}
}

func readTarGz(t *testing.T, path string) map[string]entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readTarGzBytes(t, path, b)
}

func readTarGzBytes(t *testing.T, where string, b []byte) map[string]entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return readTar(t, where, zr)
}

func readTar(t *testing.T, where string, r io.Reader) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		out[h.Name] = entry{data, h.Mode, true}
	}
}

// readAr reads a Debian package's ar members.
func readAr(t *testing.T, path string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("!<arch>\n")) {
		t.Fatalf("%s: not an ar archive", path)
	}
	out := map[string][]byte{}
	for off := 8; off+60 <= len(b); {
		h := b[off : off+60]
		name := strings.TrimRight(strings.TrimSpace(string(h[:16])), "/")
		var size int
		if _, err := fmt.Sscan(strings.TrimSpace(string(h[48:58])), &size); err != nil || off+60+size > len(b) {
			t.Fatalf("%s: bad ar member %q", path, name)
		}
		out[name] = b[off+60 : off+60+size]
		off += 60 + size + size%2
	}
	return out
}

// readRPM skips the lead and both headers and reads the gzip'd cpio payload.
func readRPM(t *testing.T, path string) map[string]entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 96 || !bytes.HasPrefix(b, []byte{0xed, 0xab, 0xee, 0xdb}) {
		t.Fatalf("%s: not an rpm", path)
	}
	header := func(off int) int {
		if off+16 > len(b) || !bytes.HasPrefix(b[off:], []byte{0x8e, 0xad, 0xe8}) {
			t.Fatalf("%s: bad rpm header at %d", path, off)
		}
		n, size := binary.BigEndian.Uint32(b[off+8:]), binary.BigEndian.Uint32(b[off+12:])
		return off + 16 + 16*int(n) + int(size)
	}
	off := header(96)
	off = (off + 7) / 8 * 8 // the signature header is padded to 8 bytes
	off = header(off)
	zr, err := gzip.NewReader(bytes.NewReader(b[off:]))
	if err != nil {
		t.Fatalf("%s: payload: %v", path, err)
	}
	return readCpio(t, path, bufio.NewReader(zr))
}

// readCpio reads a "newc" cpio archive (rpm payloads); names lose their leading ".".
func readCpio(t *testing.T, where string, r *bufio.Reader) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	pad := func(n int) {
		if _, err := io.CopyN(io.Discard, r, int64((4-n%4)%4)); err != nil {
			t.Fatalf("%s: cpio: %v", where, err)
		}
	}
	for {
		h := make([]byte, 110)
		if _, err := io.ReadFull(r, h); err != nil {
			t.Fatalf("%s: cpio header: %v", where, err)
		}
		if string(h[:6]) != "070701" {
			t.Fatalf("%s: cpio magic %q", where, h[:6])
		}
		hex := func(i int) int {
			var v int
			fmt.Sscanf(string(h[6+8*i:14+8*i]), "%08x", &v)
			return v
		}
		mode, size, nameLen := hex(1), hex(6), hex(11)
		name := make([]byte, nameLen)
		if _, err := io.ReadFull(r, name); err != nil {
			t.Fatalf("%s: cpio name: %v", where, err)
		}
		pad(110 + nameLen)
		n := strings.TrimPrefix(strings.TrimRight(string(name), "\x00"), ".")
		if n == "TRAILER!!!" {
			return out
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatalf("%s: cpio %s: %v", where, n, err)
		}
		pad(size)
		out[n] = entry{data, int64(mode & 0o7777), true}
	}
}

// field returns a Debian control field.
func field(control []byte, name string) string {
	for _, line := range strings.Split(string(control), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
