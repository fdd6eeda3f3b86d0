//go:build router

package fleet

import (
	"errors"
	"io"
)

// The router build leaves the YAML parser out (about 420 KB of a flash-sized
// binary): a router is seldom where a fleet's inventory lives.
const yamlInventories = false

// ParseYAMLInventory refuses, in one line, what the full build would read.
func ParseYAMLInventory(io.Reader) ([]Host, error) {
	return nil, errors.New("YAML and JSON inventories are not in the router build: use an INI or list inventory (hosts.ini), or the full build")
}
