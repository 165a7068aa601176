package refcluster

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// writeKubeconfigs writes the admin's kubeconfig and those of the
// controller manager and the scheduler, all token-authenticated and
// trusting the cluster CA.
func (c *Cluster) writeKubeconfigs() error {
	ca, err := os.ReadFile(c.creds.caCert)
	if err != nil {
		return fmt.Errorf("refcluster: %w", err)
	}
	for _, k := range []struct{ path, user, token string }{
		{c.kubeconf, adminUser, c.creds.adminToken},
		{filepath.Join(c.opts.Dir, "controller-manager.kubeconfig"), controllerManagerUser, c.creds.controllerManagerToken},
		{filepath.Join(c.opts.Dir, "scheduler.kubeconfig"), schedulerUser, c.creds.schedulerToken},
	} {
		if err := os.WriteFile(k.path, []byte(kubeconfig(c.url, ca, k.user, k.token)), 0o600); err != nil {
			return fmt.Errorf("refcluster: %w", err)
		}
	}
	return nil
}

// kubeconfig renders a kubeconfig with one cluster, user and context.
func kubeconfig(server string, ca []byte, user, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: refcluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %q
  user:
    token: %s
contexts:
- name: refcluster
  context:
    cluster: refcluster
    user: %q
current-context: refcluster
preferences: {}
`, server, base64.StdEncoding.EncodeToString(ca), user, token, user)
}
