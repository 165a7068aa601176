package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/rest"
)

// componentConfig reads the kubeconfig the API server wrote for a
// component (pki.ControllerManagerKubeconfig, pki.SchedulerKubeconfig):
// its own client certificate.
func (c *Cluster) componentConfig(file string) (*rest.Config, error) {
	path := filepath.Join(filepath.Dir(c.API.KubeconfigPath()), file)
	cfg, err := rest.ConfigFromKubeconfig(path, "")
	if err != nil {
		return nil, fmt.Errorf("cluster: read %s: %w", path, err)
	}
	return cfg, nil
}

// nodeCredentials gives each simulated node a client certificate of
// system:node:<name> in system:nodes, signed by the cluster CA (kept in
// credDir) and held in memory, as a kubelet's after its TLS bootstrap.
func nodeCredentials(base *rest.Config, credDir string) (func(string) (*rest.Config, error), error) {
	ca, err := pki.EnsureCA(credDir)
	if err != nil {
		return nil, fmt.Errorf("cluster: the CA that signs node certificates: %w", err)
	}
	return NodeCredentials(base, ca), nil
}

// NodeCredentials returns the credentials of simulated nodes for the
// node agent (nodeagent.Options.NodeCredentials): base's server and trust,
// with a new client certificate of system:node:<name> in system:nodes
// signed by ca instead of base's own credentials.
func NodeCredentials(base *rest.Config, ca *pki.CA) func(string) (*rest.Config, error) {
	return func(name string) (*rest.Config, error) {
		certPEM, keyPEM, err := ca.IssueClient(pki.NodeUser(name), []string{pki.NodesGroup})
		if err != nil {
			return nil, err
		}
		cfg := *base
		cfg.BearerToken, cfg.BearerTokenFile = "", ""
		cfg.TLS.CertFile, cfg.TLS.KeyFile = "", ""
		cfg.TLS.CertData, cfg.TLS.KeyData = certPEM, keyPEM
		return &cfg, nil
	}
}

// installDefaultClass installs the simulated provisioner's default
// StorageClass once per cluster as the admin (provisioner.InstallDefaultClass).
func installDefaultClass(admin *rest.Config, name string) error {
	if name == "" {
		name = provisioner.DefaultName
	}
	c, err := rest.New(admin)
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := provisioner.InstallDefaultClass(ctx, c, name); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}
