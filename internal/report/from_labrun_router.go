//go:build router

package report

import "errors"

// fromLabRunJSON: the router build has no lab, so no lab run results.
func fromLabRunJSON([]byte) (Document, error) {
	return Document{}, errors.New("lab run results: the lab is not in the router build of wgperf")
}
