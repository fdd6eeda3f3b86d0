package remedy

import (
	"context"
	"fmt"
	"strings"
)

// Availability says whether a kernel has a queue discipline.
type Availability int

const (
	Unsure Availability = iota // neither its symbols nor the module tree could tell
	Has                        // built in, loaded, or a module the kernel loads on first use
	Lacks
)

// KernelQdiscs is what a kernel offers of the qdiscs SQM is built from,
// with the evidence in one line.
type KernelQdiscs struct {
	Cake, FQCodel, HTB Availability
	Evidence           string
}

// QdiscProbe (a shell script) prints, for each qdisc, whether its init function is among the
// kernel's symbols (built in or loaded), whether the module tree lists it,
// and whether either source could be read at all. It changes nothing.
const QdiscProbe = `k=$(uname -r); dep=/lib/modules/$k/modules.dep
if grep -q . /proc/kallsyms 2>/dev/null; then echo kallsyms; fi
if [ -f "$dep" ]; then echo moduletree; fi
for q in cake fq_codel htb; do
  if grep -qw "${q}_init" /proc/kallsyms 2>/dev/null; then echo "$q kernel"; fi
  if [ -f "$dep" ] && grep -q "/sch_$q\.ko" "$dep"; then echo "$q module"; fi
done`

// Qdiscs finds out which of cake, fq_codel and htb env's kernel has, without
// creating any: a qdisc's init function is in /proc/kallsyms when it is built
// in or loaded, and a module the tree lists loads when tc first asks for it.
func Qdiscs(ctx context.Context, env *Env) (KernelQdiscs, error) {
	out, err := env.sh(ctx, QdiscProbe)
	if err != nil {
		return KernelQdiscs{}, fmt.Errorf("%s: reading which qdiscs the kernel has: %w", env.T, err)
	}
	return ParseQdiscProbe(string(out)), nil
}

// ParseQdiscProbe reads QdiscProbe's output.
func ParseQdiscProbe(out string) KernelQdiscs {
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		seen[strings.TrimSpace(line)] = true
	}
	// Without symbols nothing built in can be seen; without a module tree
	// nothing loadable can: both are needed to say a qdisc is missing.
	canSay := seen["kallsyms"]
	judge := func(q string) (Availability, string) {
		switch {
		case seen[q+" kernel"]:
			return Has, q + " in the kernel"
		case seen[q+" module"]:
			return Has, q + " as a module"
		case canSay && seen["moduletree"]:
			return Lacks, "no " + q + " built in or among its modules"
		case canSay:
			return Lacks, "no " + q + " built in, and no module tree to load one from"
		}
		return Unsure, q + " unknown (no /proc/kallsyms)"
	}
	var k KernelQdiscs
	var ev [3]string
	k.Cake, ev[0] = judge("cake")
	k.FQCodel, ev[1] = judge("fq_codel")
	k.HTB, ev[2] = judge("htb")
	k.Evidence = strings.Join(ev[:], "; ")
	return k
}
