package fix

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// TestHasBootHookAsSystemdDecides is issue 40: HasBootHook says what
// "systemctl is-enabled" says and the next boot does: the link
// deb-systemd-helper or a preset makes in /etc enables the hook, a vendor
// link under /usr/lib does not (the packages no longer ship one), a mask or a
// removed unit wins over a link, and before the first boot a preset line
// enables it.
func TestHasBootHookAsSystemdDecides(t *testing.T) {
	const unit = "/lib/systemd/system/" + BootHookUnit
	wants := "/etc/systemd/system/multi-user.target.wants/" + BootHookUnit
	for _, tc := range []struct {
		name  string
		files map[string]string // path: content, or "-> target" for a link
		want  bool
	}{
		{"nothing installed", nil, false},
		{"installed, not enabled", map[string]string{unit: "[Unit]\n", "/etc/machine-id": "0123\n"}, false},
		{"enabled by deb-systemd-helper or systemctl", map[string]string{unit: "[Unit]\n", wants: "-> " + unit}, true},
		{"only a vendor link (the old packages)", map[string]string{unit: "[Unit]\n", "/lib/systemd/system/multi-user.target.wants/" + BootHookUnit: "-> ../" + BootHookUnit, "/etc/machine-id": "0123\n"}, false},
		{"masked", map[string]string{unit: "[Unit]\n", wants: "-> " + unit, "/etc/systemd/system/" + BootHookUnit: "-> /dev/null"}, false},
		{"link left by a removed package", map[string]string{wants: "-> " + unit}, false},
		{"first boot, preset enables it", map[string]string{unit: "[Unit]\n", "/usr/lib/systemd/system-preset/90-wgperf.preset": "enable wgperf-fix-rollback.service\n"}, true},
		{"first boot, an earlier preset disables everything", map[string]string{unit: "[Unit]\n",
			"/usr/lib/systemd/system-preset/90-wgperf.preset": "enable wgperf-fix-rollback.service\n",
			"/etc/systemd/system-preset/10-local.preset":      "# none of it\ndisable *\n"}, false},
		{"preset after the first boot", map[string]string{unit: "[Unit]\n", "/etc/machine-id": "0123\n",
			"/usr/lib/systemd/system-preset/90-wgperf.preset": "enable wgperf-fix-rollback.service\n"}, false},
		{"OpenWrt's rc.d link", map[string]string{"/etc/rc.d/S99wgperf-fix-rollback": "-> ../init.d/wgperf-fix-rollback"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range tc.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				if len(c) > 3 && c[:3] == "-> " {
					err = os.Symlink(c[3:], full)
				} else {
					err = os.WriteFile(full, []byte(c), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			env := &Env{Env: remedy.Env{T: target.Local(), Root: root, Platform: remedy.Linux}}
			if got := HasBootHook(context.Background(), env); got != tc.want {
				t.Errorf("HasBootHook = %v, want %v", got, tc.want)
			}
		})
	}
}
