package fix

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
