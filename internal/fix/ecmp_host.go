package fix

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// ReadECMPInput reads what PlanECMP starts from on the host: iface's
// wg-quick config and the hash policy of every bond.
func ReadECMPInput(ctx context.Context, h Host, iface string) (ECMPInput, error) {
	env, err := h.open(ctx)
	if err != nil {
		return ECMPInput{}, err
	}
	path := env.Path("/etc/wireguard/" + iface + ".conf")
	data, err := env.T.ReadFile(ctx, path)
	if err != nil {
		return ECMPInput{}, fmt.Errorf("%s: read %s: %v (ecmp starts from a wg-quick config)", env.T, path, err)
	}
	conf, err := ParseWGQuick(bytes.NewReader(data))
	if err != nil {
		return ECMPInput{}, fmt.Errorf("%s: %v", path, err)
	}
	bonds := map[string]string{}
	if out, err := env.T.Run(ctx, "sh", "-c", "grep -H . /sys/class/net/*/bonding/xmit_hash_policy 2>/dev/null || true"); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			// /sys/class/net/bond0/bonding/xmit_hash_policy:layer2 0
			p, v, ok := strings.Cut(l, ":")
			if parts := strings.Split(p, "/"); ok && len(parts) > 4 && len(strings.Fields(v)) > 0 {
				bonds[parts[4]] = strings.Fields(v)[0]
			}
		}
	}
	return ECMPInput{Interface: iface, Conf: conf, Bonds: bonds}, nil
}
