package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNegativeTimeoutFlagsAreRefused: `setpoint apiserver` refuses negative
// request timeouts with kube-apiserver's words, before it opens a store.
func TestNegativeTimeoutFlagsAreRefused(t *testing.T) {
	for _, c := range []struct{ flag, want string }{
		{"--request-timeout=-1s", "--request-timeout can not be negative value"},
		{"--min-request-timeout=-5", "--min-request-timeout can not be negative value"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		out, err := exec.Command(setpointBin, "apiserver", "--data-dir", dir, "--listen", "127.0.0.1:0", c.flag).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: err %v, output %q; want an exit naming %q", c.flag, err, out, c.want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the data dir was created (%v)", c.flag, err)
		}
	}
}
