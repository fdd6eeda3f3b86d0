package check

// Source is one check or probe that reports an ID, in its own words. Which
// package builds the finding is the package's own declaration (its Raises).
type Source struct {
	Kind string `json:"kind"` // "check", "cross-host check" or "probe"
	Name string `json:"name"` // the probe's command; the check's title
	Doc  string `json:"doc"`
}
