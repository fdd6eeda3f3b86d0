package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/target"
)

// AnsibleInventory is the inventory Ansible reads when no -i names one: the
// sources of $ANSIBLE_INVENTORY, separated by commas as Ansible splits them,
// a leading ~/ the home folder (nil when it is unset or empty). Commands take
// it where they need an inventory and none is named: never to turn a command
// about this host into one about a fleet.
func AnsibleInventory() []string {
	var out []string
	for _, s := range strings.Split(os.Getenv("ANSIBLE_INVENTORY"), ",") {
		s = strings.TrimSpace(s)
		if rest, ok := strings.CutPrefix(s, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				s = filepath.Join(home, rest)
			}
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// listedHost is one host of "inventory --json" and "diagnose --list-hosts --json".
type listedHost struct {
	Name   string      `json:"name"`
	Target target.Spec `json:"target"`
	Groups []string    `json:"groups"`
}

// hostList is the document of kind inventory.
type hostList struct {
	Hosts   []listedHost `json:"hosts"`
	Ignored []string     `json:"ignored_variables"`
}

// Listing is how "wgperf inventory" and "diagnose --list-hosts" print the
// hosts an inventory selects: one per line (name and target), a document
// (JSON, of wgperf Version), or Prometheus file_sd JSON.
type Listing struct {
	Sources    []string
	Limit      string
	Extra      []string // targets named beside the inventory (--host)
	JSON       bool
	Prometheus bool
	Version    string
}

// List reads the inventory and prints its hosts (then Extra's) to w; its
// warnings go to warn as "wgperf: ..." lines. Nothing is logged into.
func List(ctx context.Context, l Listing, w, warn io.Writer) error {
	if l.JSON && l.Prometheus {
		return errors.New("--json and --prometheus: choose one")
	}
	inv, err := LoadAll(ctx, l.Sources, LoadOptions{Limit: l.Limit})
	if err != nil {
		return err
	}
	if s := inv.Warning(); s != "" {
		fmt.Fprintln(warn, "wgperf:", s)
	}
	more, err := Hosts(l.Extra)
	if err != nil {
		return err
	}
	hosts := append(inv.Hosts, more...)
	if !l.Prometheus {
		return l.write(w, hosts, inv.Ignored)
	}
	groups, unreached := PrometheusTargets(hosts)
	if len(unreached) > 0 {
		fmt.Fprintln(warn, "wgperf: the exporter's /probe reaches these hosts with its own ssh settings, not the inventory's (key, ssh arguments, become; put them in its user's ~/.ssh/config):",
			strings.Join(unreached, ", "))
	}
	b, err := json.MarshalIndent(groups, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// write prints hosts, one per line (name and target), or as a document.
func (l Listing) write(w io.Writer, hosts []Host, ignored []string) error {
	if l.JSON {
		doc := hostList{Hosts: []listedHost{}, Ignored: append([]string{}, ignored...)}
		for _, h := range hosts {
			doc.Hosts = append(doc.Hosts, listedHost{Name: h.Name, Target: h.Target, Groups: append([]string{}, h.Groups...)})
		}
		return document.Write(w, document.Inventory, l.Version, doc)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, h := range hosts {
		fmt.Fprintf(tw, "%s\t%s\n", h.Name, h.Target)
	}
	return tw.Flush()
}
