package pki

import (
	"fmt"
	"path/filepath"
)

// FrontProxyClientUser is the CommonName of the front-proxy client
// certificate, kubeadm's name; it is the one name aggregated API servers
// are told to accept (requestheader-allowed-names).
const FrontProxyClientUser = "front-proxy-client"

// FrontProxy are the files of the front-proxy credentials in a data
// directory, kubeadm's layout: the CA that aggregated API servers trust
// for requests carrying X-Remote-* headers, and the client certificate
// the API server presents to them.
type FrontProxy struct {
	CAFile, ClientCertFile, ClientKeyFile string
}

// EnsureFrontProxy creates (on first use) or loads the front-proxy CA
// dir/pki/front-proxy-ca.{crt,key}, a CA of its own distinct from the
// cluster CA, and the client certificate
// dir/pki/front-proxy-client.{crt,key} it signs for FrontProxyClientUser.
func EnsureFrontProxy(dir string) (FrontProxy, error) {
	pkiDir := filepath.Join(dir, "pki")
	fp := FrontProxy{
		CAFile:         filepath.Join(pkiDir, "front-proxy-ca.crt"),
		ClientCertFile: filepath.Join(pkiDir, "front-proxy-client.crt"),
		ClientKeyFile:  filepath.Join(pkiDir, "front-proxy-client.key"),
	}
	ca, err := ensureCA(fp.CAFile, filepath.Join(pkiDir, "front-proxy-ca.key"), "front-proxy-ca")
	if err != nil {
		return FrontProxy{}, fmt.Errorf("front-proxy CA: %w", err)
	}
	if _, err := ca.EnsureClient(dir, "front-proxy-client", FrontProxyClientUser, nil); err != nil {
		return FrontProxy{}, fmt.Errorf("front-proxy client certificate: %w", err)
	}
	return fp, nil
}
