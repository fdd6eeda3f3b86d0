package check

import (
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// Values of remedy params the catalog names more than once.
var (
	wgInterface     = Named("the WireGuard interface").On(onWireGuard)
	uciSectionParam = Named("its OpenWrt network section").On(tunnelUCISection).Optional()
	wgMTU           = Remedy{Kind: remedy.KindWGMTU, Params: map[string]Values{"interface": wgInterface, "mtu": Between(1280, 9000).On(lowersMTU), "uci_section": uciSectionParam}}
	notrack         = Remedy{Kind: remedy.KindNoTrack, Params: map[string]Values{
		"interface": Named("the WireGuard interface, which no NAT rule matches").On(untrackable), "port": Between(1, 65535).On(listenPort)}}
)

// maxInt is the largest value the kernel takes for an int sysctl.
const maxInt = 1<<31 - 1

// exampleHost is the host the example fixes are written for: a Linux host
// (not OpenWrt), whose remedies are the plain ones.
var exampleHost = &facts.Snapshot{}

const (
	exampleEndpoint = "203.0.113.2"
	exampleGateway  = "192.0.2.1"
)

var exampleWG = facts.WGInterface{Name: "wg0", ListenPort: 51820}

// exampleFarKey is the far end's public key in the examples.
const exampleFarKey = "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA="

// Catalog is every finding ID wgperf reports, sorted by ID: each entry of
// catalog.Entries with what reports it and how it is fixed (the area files
// here, catalog_AREA.go, add those by ID).
var Catalog = join(catalog.Entries, slices.Concat(linkEntries, conntrackEntries, cpuEntries, mtuEntries, pathEntries, throughputEntries, wgEntries))

// join fills each entry's catalog.Entry from its ID, in the catalog's order.
// An ID on one side only panics: TestCatalog names it.
func join(cat []catalog.Entry, es []Entry) []Entry {
	byID := map[finding.ID]Entry{}
	for _, e := range es {
		byID[e.ID] = e
	}
	out := make([]Entry, 0, len(cat))
	for _, c := range cat {
		e, ok := byID[c.ID]
		if !ok {
			panic("check: " + string(c.ID) + " has no entry in catalog_AREA.go: what reports it and its example fix")
		}
		e.Entry = c
		out = append(out, e)
		delete(byID, c.ID)
	}
	for id := range byID {
		panic("check: " + string(id) + " is not in package catalog")
	}
	return out
}
