//go:build router

package fleet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The router build leaves the YAML parser out (about 420 KB of a flash-sized
// binary): a router is seldom where a fleet's inventory lives.
const yamlInventories = false

var errNoYAML = errors.New("YAML and JSON inventories are not in the router build: use an INI or list inventory (hosts.ini), or the full build")

// ParseYAMLInventory refuses, in one line, what the full build would read.
func ParseYAMLInventory(io.Reader) ([]Host, error) { return nil, errNoYAML }

func (inv *inventory) readYAML(io.Reader) error { return errNoYAML }

// readVarDirs refuses group_vars/ and host_vars/ beside the inventory: their
// files are YAML, and a host read without its variables could be reached
// with other settings than Ansible's.
func (inv *inventory) readVarDirs(dir string) error {
	for _, kind := range []string{"group_vars", "host_vars"} {
		path := filepath.Join(dir, kind)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return fmt.Errorf("%s: group_vars/ and host_vars/ are YAML, which the router build leaves out: use the full build", path)
		}
	}
	return nil
}
