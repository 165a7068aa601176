package apiserver

import (
	"net"

	"github.com/setpoint-dev/setpoint/internal/pki"
)

// loadCredentials loads (creating on first use) the CA and the tokens: the
// shared ones in cfg.PKIDir when set, else this server's own in DataDir.
func loadCredentials(cfg Config) (*pki.CA, *pki.Tokens, string, error) {
	if cfg.PKIDir != "" {
		return pki.LoadShared(cfg.PKIDir)
	}
	ca, err := pki.EnsureCA(cfg.DataDir)
	if err != nil {
		return nil, nil, "", err
	}
	tokens, admin, err := pki.EnsureTokens(cfg.DataDir)
	if err != nil {
		return nil, nil, "", err
	}
	return ca, tokens, admin, nil
}

// advertisedURL is the https URL clients use for this server, bound to
// host:port.
func (s *Server) advertisedURL(host, port string) string {
	if a := s.cfg.AdvertiseAddress; a != "" {
		host = a
	} else if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, port)
}

// writeKubeconfigs writes the admin kubeconfig to DataDir, and the
// controller manager's and scheduler's (pki.WriteComponentKubeconfigs);
// with a PKIDir it
// first registers this server there and lists every registered server in
// the kubeconfig, which it also writes to PKIDir/kubeconfig.
func (s *Server) writeKubeconfigs(host, port string) error {
	server := s.advertisedURL(host, port)
	var peers []string
	if s.cfg.PKIDir != "" {
		var err error
		if peers, err = pki.RegisterServer(s.cfg.PKIDir, server, s.ca.CertPEM, s.admin); err != nil {
			return err
		}
	}
	if err := pki.WriteKubeconfig(s.KubeconfigPath(), server, peers, s.ca.CertPEM, s.admin); err != nil {
		return err
	}
	// The controller manager's and the scheduler's own identities
	// (client certificates), as kubeadm writes them beside admin.conf.
	return pki.WriteComponentKubeconfigs(s.cfg.DataDir, server, peers, s.ca)
}
