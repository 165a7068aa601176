package apiserver

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/setpoint-dev/setpoint/internal/pki"
)

// newNodeTransport is how the server reaches nodes' kubelet endpoints: with
// a client certificate of its own (user kube-apiserver-kubelet-client in
// group system:masters), and, as kube-apiserver does without
// --kubelet-certificate-authority, without verifying the nodes' serving
// certificates, which kubelets usually sign themselves. It speaks HTTP/1.1,
// which the upgrades of exec, attach and portforward need.
func newNodeTransport(dataDir string, ca *pki.CA) (http.RoundTripper, error) {
	cert, err := ca.EnsureClient(dataDir, "kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	return &http.Transport{
		DialContext: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig: &tls.Config{
			Certificates:       []tls.Certificate{cert},
			InsecureSkipVerify: true, //nolint:gosec // kube-apiserver's default for kubelet connections
			MinVersion:         tls.VersionTLS12,
		},
		Proxy:               nil,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 16,
	}, nil
}
