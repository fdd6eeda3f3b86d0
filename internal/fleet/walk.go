package fleet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This file holds the walk over an inventory's sources: a file read by its
// extension (INI or list, YAML or JSON), a directory's entries in name order
// as Ansible lists them, skipping what Ansible skips there.

// ignoredExts are the endings of names an inventory directory's listing
// skips: ansible-core's INVENTORY_IGNORE_EXTS default (REJECT_EXTS, .orig,
// .cfg, .retry). Before ansible-core 2.19 it skipped .ini files too; wgperf
// reads them, as Ansible does now.
var ignoredExts = []string{".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry"}

// ignoredEntry says whether Ansible skips a directory entry of this name
// when the directory is an inventory source.
func ignoredEntry(name string) bool {
	if strings.HasPrefix(name, ".") || name == "group_vars" || name == "host_vars" || name == "vars_plugins" {
		return true
	}
	for _, ext := range ignoredExts {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// source reads one inventory source, a file or a directory, and returns
// the folder whose group_vars/ and host_vars/ go with it ("" for an
// ansible-inventory listing, whose variables come resolved).
func (inv *inventory) source(path string) (string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return path, inv.readDir(path, 0)
	}
	listed, err := inv.readFile(path)
	if err != nil || listed {
		return "", err
	}
	return filepath.Dir(path), nil
}

// readDir reads every inventory file under dir, in name order as Ansible
// lists it, depth directories below the source. A link is read as what it
// points to, as Ansible does, but a directory is read once: one reached
// again (a symbolic link back up, or two links to one directory) is an
// error, not a loop or a doubling; the walk is bounded in depth and entries
// (bounds.go).
func (inv *inventory) readDir(dir string, depth int) error {
	if err := inv.enterDir(dir, depth); err != nil {
		return err
	}
	entries, err := readDirNames(dir, maxDirEntries-inv.entries)
	if err != nil {
		return fmt.Errorf("inventory: %v", err)
	}
	for _, name := range entries {
		if err := inv.ctx.Err(); err != nil {
			return err
		}
		if err := inv.countEntry(dir); err != nil {
			return err
		}
		if err := inv.charge(1); err != nil {
			return fmt.Errorf("inventory: %s: %v", dir, err)
		}
		if ignoredEntry(name) {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path) // a link is read as what it points to, as Ansible does
		if err != nil {
			return fmt.Errorf("inventory: %v", err)
		}
		switch {
		case fi.IsDir():
			err = inv.readDir(path, depth+1)
		case fi.Mode().IsRegular():
			_, err = inv.readFile(path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readFile reads one inventory file into inv and says whether it was an
// ansible-inventory listing. An executable file that starts with "#!" is
// an inventory script, which Ansible would run and wgperf refuses.
func (inv *inventory) readFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("inventory: %v", err)
	}
	defer f.Close()
	br := bufio.NewReader(inv.bounded(f, path))
	if fi, err := f.Stat(); err == nil && fi.Mode()&0o111 != 0 {
		if head, _ := br.Peek(2); string(head) == "#!" {
			return false, fmt.Errorf("%s: an inventory script: wgperf runs none (save its output, ansible-inventory -i %s --list > hosts.json, and read that)", path, path)
		}
	}
	inv.files = append(inv.files, path)
	inv.file = path
	inv.listed = false
	read := inv.read
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yml" || ext == ".yaml" || ext == ".json" {
		read = inv.readYAML
	}
	if err := read(br); err != nil {
		return false, fmt.Errorf("%s: %v", path, err)
	}
	return inv.listed, nil
}
