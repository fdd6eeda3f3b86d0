// Package fix is the apply engine over remedies: it turns findings' fixes
// into a plan of remedy.Steps on one host, applies them with a journal on the
// target so they can be restored exactly — by "wgperf fix rollback", or by a
// plain-shell watchdog when a change is not confirmed in time — and verifies
// the result by measuring again (Run).
//
// Nothing here changes a host except Apply, Rollback and the watchdog.
package fix

import "github.com/wgperf/wgperf/internal/remedy"

// Step and FileChange are a remedy's planned change; the journal stores them.
type (
	Step       = remedy.Step
	FileChange = remedy.FileChange
)
