package remedy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Key material never leaves the host through wgperf: not in "fix --json", not
// in a journal, not in the watchdog's revert.sh. A file change that touches a
// wg-quick config (or a uci file) carries its key lines with the value
// replaced by KeyMark; a rollback puts the file back from the saved content
// and takes each marked line from the live file, whose keys wgperf never
// changes.

// KeyMark replaces the value of a key line.
const KeyMark = "(redacted by wgperf)"

// keyLineRE matches a line holding key material and captures its kind and the
// text before the value: wg-quick's PrivateKey/PresharedKey (case-insensitive,
// as wg-quick reads them) and uci's private_key/preshared_key options.
var keyLineRE = regexp.MustCompile(`(?i)^(\s*(privatekey|presharedkey)\s*=\s*|\s*(?:option|list)\s+(private_key|preshared_key)\s+)(.*)$`)

// KeyKind returns the kind of key a line holds ("" for none) and where its value starts.
func KeyKind(line string) (kind string, valueAt int) {
	m := keyLineRE.FindStringSubmatchIndex(line)
	if m == nil {
		return "", 0
	}
	for _, g := range []int{2, 3} {
		if m[2*g] >= 0 {
			return strings.ToLower(line[m[2*g]:m[2*g+1]]), m[3]
		}
	}
	return "", 0
}

// RedactKeys returns data with every key value replaced by KeyMark.
func RedactKeys(data []byte) []byte {
	if !bytes.Contains(bytes.ToLower(data), []byte("key")) {
		return data
	}
	lines := strings.SplitAfter(string(data), "\n")
	changed := false
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if kind, at := KeyKind(body); kind != "" && strings.TrimSpace(body[at:]) != KeyMark {
			lines[i] = body[:at] + KeyMark
			if nl {
				lines[i] += "\n"
			}
			changed = true
		}
	}
	if !changed {
		return data
	}
	return []byte(strings.Join(lines, ""))
}

// HasRedacted reports whether data holds key lines RedactKeys marked.
func HasRedacted(data []byte) bool { return bytes.Contains(data, []byte(KeyMark)) }

// RestoreKeys fills the marked key lines of saved with the key lines of live:
// the n-th marked line of a kind takes the n-th line of that kind in live.
func RestoreKeys(saved, live []byte) ([]byte, error) {
	have := map[string][]string{}
	for _, l := range strings.Split(string(live), "\n") {
		if kind, at := KeyKind(l); kind != "" && strings.TrimSpace(l[at:]) != KeyMark {
			have[kind] = append(have[kind], l)
		}
	}
	used := map[string]int{}
	lines := strings.SplitAfter(string(saved), "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		kind, at := KeyKind(body)
		if kind == "" || strings.TrimSpace(body[at:]) != KeyMark {
			continue
		}
		n := used[kind]
		if n >= len(have[kind]) {
			return nil, fmt.Errorf("the live file has no %s line to restore (wgperf does not store keys)", kind)
		}
		used[kind]++
		lines[i] = have[kind][n]
		if nl {
			lines[i] += "\n"
		}
	}
	return []byte(strings.Join(lines, "")), nil
}

// MarshalJSON writes a FileChange with its key lines redacted, so no JSON
// that wgperf writes (plans, journals) carries key material.
func (f FileChange) MarshalJSON() ([]byte, error) {
	type plain FileChange // without this method
	p := plain(f)
	p.Old, p.New = RedactKeys(f.Old), RedactKeys(f.New)
	return json.Marshal(p)
}
