package diagnose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf diagnose": the hosts, snapshots and inventory it
// reads, the findings it shows, and how it prints them.
type Command struct {
	Hosts, Files, Inventory []string
	Options                 Options
	MinSeverity             finding.Severity
	JSON                    bool
	Color                   bool   // text in colour (a terminal)
	Version                 string // the JSON document's wgperf_version
	// Severity is --severity as given, read into MinSeverity by Check.
	Severity string
	// ListHosts is --list-hosts: the inventory's hosts are listed, not
	// diagnosed.
	ListHosts bool
}

// Check checks c's flags and fills in their defaults: MinSeverity from
// Severity, ANSIBLE_INVENTORY's sources where an inventory is needed and none
// was named (as Ansible reads them without -i), and this machine when
// nothing at all was named.
func (c *Command) Check() error {
	minSev, err := finding.ParseSeverity(c.Severity)
	if err != nil {
		return fmt.Errorf("--severity: %v", err)
	}
	c.MinSeverity = minSev
	o := c.Options
	if o.Check.PathRateMbit < 0 || o.Check.PathRTT < 0 {
		return errors.New("--rate and --rtt must not be negative")
	}
	if o.Concurrency < 1 || o.HostTimeout <= 0 {
		return errors.New("--concurrency must be at least 1 and --host-timeout positive")
	}
	if len(c.Inventory) == 0 && (o.Limit != "" || c.ListHosts) {
		c.Inventory = fleet.AnsibleInventory()
	}
	if len(c.Hosts) == 0 && len(c.Files) == 0 && len(c.Inventory) == 0 {
		c.Hosts = []string{"local"}
	}
	if o.Limit != "" && len(c.Inventory) == 0 {
		return errors.New("--limit selects hosts of an --inventory (-i, or ANSIBLE_INVENTORY)")
	}
	if c.ListHosts && len(c.Inventory) == 0 {
		return errors.New("--list-hosts lists the hosts of an --inventory (-i, or ANSIBLE_INVENTORY)")
	}
	return nil
}

// RunCommand diagnoses c's hosts (an inventory's as a Fleet, whose
// unreachable hosts are reported), keeps the findings at or above
// MinSeverity and prints the result to w, as JSON or text. The Fleet is nil
// without an inventory.
func RunCommand(ctx context.Context, c Command, w io.Writer) (Diagnosis, *Fleet, error) {
	// diagnose collects each host once, in one remote shell: a connection
	// of its own, closed with the shell, is one ssh process where a shared
	// one is two and outlives the run.
	c.Options.SSH = target.SSHConns{Own: true}
	var fl *Fleet
	var d Diagnosis
	var err error
	if len(c.Inventory) > 0 {
		fl, err = RunInventory(ctx, c.Inventory, c.Hosts, c.Files, c.Options)
		if fl != nil {
			d = fl.Diagnosis
		}
	} else {
		d, err = Run(ctx, c.Hosts, c.Files, c.Options)
	}
	if err != nil {
		return d, nil, err
	}
	d = d.AtLeast(c.MinSeverity)
	if fl != nil {
		fl.Diagnosis = d
	}
	return d, fl, c.Print(w, d, fl)
}

// Print prints d, or the fleet it belongs to, as JSON or text.
func (c Command) Print(w io.Writer, d Diagnosis, fl *Fleet) error {
	o := TextOptions{Color: c.Color}
	switch {
	case fl != nil && c.JSON:
		return document.Write(w, document.DiagnoseFleet, c.Version, fl)
	case fl != nil:
		return fl.WriteText(w, o)
	case c.JSON:
		var buf bytes.Buffer
		if err := WriteJSON(&buf, d); err != nil {
			return err
		}
		return document.WriteJSON(w, document.Diagnose, c.Version, buf.Bytes())
	}
	return WriteText(w, d, o)
}
