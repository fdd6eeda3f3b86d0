package check

// Source is one check or probe that reports an ID.
type Source struct {
	Kind string `json:"kind"` // "check", "cross-host check" or "probe"
	Name string `json:"name"` // the probe's command; the check's title
	Doc  string `json:"doc"`
	// Package is the module's package whose code makes the finding
	// ("internal/probe/bench"), where the probe's command only runs it: a
	// check's is this one. TestProducers holds that no other package makes
	// a finding with the ID and that this one still does.
	Package string `json:"-"`
}
