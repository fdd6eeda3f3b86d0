package fleet

import (
	"fmt"
	"strings"
)

// Warning is the one line of a run that names the Ansible settings wgperf
// ignored, each once however many hosts set it, "" when it ignored none: an
// inventory is never read with a setting silently dropped. A setting is a
// variable Ansible reads (ansible_...) to reach or run on a host; the
// inventory's own variables (site, ntp_servers) are its playbooks', and an
// interpreter (ansible_python_interpreter) only runs Ansible's modules, so
// they pass silently (Ignored still lists them).
func (inv *Inventory) Warning() string {
	var names []string
	for _, n := range inv.Ignored {
		if strings.HasPrefix(n, "ansible_") && !strings.HasSuffix(n, "_interpreter") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	more := ""
	if len(names) > 12 {
		names, more = names[:12], fmt.Sprintf(" and %d more", len(names)-12)
	}
	return "inventory: Ansible settings wgperf ignores (it reaches hosts with ansible_host, _port, _user, _connection, the ssh key and args, become): " +
		strings.Join(names, ", ") + more
}
