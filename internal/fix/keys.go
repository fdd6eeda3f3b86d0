package fix

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// writeLines is the shell that writes data to path with mode, for every
// script wgperf renders (the printed plan, the watchdog's revert.sh): data
// goes through remedy.RedactKeys, the one redaction of the text plan, the
// JSON and the journal, so no script holds a key. A file without keys is
// written as it is; in a keyed one each marked line is taken back from the
// live file by restoreAwk (wgperf never changes keys, so the live file
// holds them), through temporary files beside it that only the owner can
// read. onFail is the shell run when that fails (the file is then left as
// it was).
func writeLines(path string, data []byte, mode fsMode, onFail string) string {
	red := remedy.RedactKeys(data)
	if !remedy.HasRedacted(red) {
		return fmt.Sprintf("%s\nchmod %o %s", remedy.Heredoc(path, red), mode, shell.Quote(path))
	}
	tmp, done := path+".wgperf-undo", path+".wgperf-undo.new"
	return fmt.Sprintf("(umask 077 && {\n%s\n} && awk -v mark=%s %s %s %s > %s && chmod %o %s && mv -f %s %s) || %s\nrm -f %s %s",
		remedy.Heredoc(tmp, red), shell.Quote(remedy.KeyMark), shell.Quote(restoreAwk), shell.Quote(path), shell.Quote(tmp),
		shell.Quote(done), mode, shell.Quote(done), shell.Quote(done), shell.Quote(path), onFail, shell.Quote(tmp), shell.Quote(done))
}

// restoreAwk is restoreKeys in awk, for the watchdog's revert.sh on hosts
// without wgperf: ARGV[1] is the live file, ARGV[2] the saved content; it
// prints the saved content with marked lines taken from the live file and
// exits 1 when one is missing.
const restoreAwk = `function kind(l,  t) {
	t = tolower(l)
	if (t ~ /^[ \t]*privatekey[ \t]*=/) return "privatekey"
	if (t ~ /^[ \t]*presharedkey[ \t]*=/) return "presharedkey"
	if (t ~ /^[ \t]*(option|list)[ \t]+private_key[ \t]/) return "private_key"
	if (t ~ /^[ \t]*(option|list)[ \t]+preshared_key[ \t]/) return "preshared_key"
	return ""
}
FILENAME == ARGV[1] { k = kind($0); if (k != "" && index($0, mark) == 0) { n[k]++; live[k, n[k]] = $0 }; next }
{
	k = kind($0)
	if (k != "" && index($0, mark) > 0) {
		m[k]++
		if ((k, m[k]) in live) { print live[k, m[k]]; next }
		bad = 1
	}
	print
}
END { exit bad }`
