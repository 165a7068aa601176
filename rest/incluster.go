package rest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service-account
// credentials: token, ca.crt and namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ErrNotInCluster is returned by InClusterConfig outside a pod: the
// service's host and port are not in the environment.
var ErrNotInCluster = errors.New("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")

// InClusterConfig is the configuration of a client running in a pod, as
// client-go's rest.InClusterConfig: the API server at
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, trusted with
// the mounted ca.crt, authenticated with the mounted token, which the
// client reads again every TokenFileRereadPeriod (the kubelet rotates it
// in place) and after a 401. Namespace is the pod's namespace.
func InClusterConfig() (*Config, error) {
	return InClusterConfigFrom(ServiceAccountDir)
}

// InClusterConfigFrom is InClusterConfig with the credentials read from
// dir instead of ServiceAccountDir.
func InClusterConfigFrom(dir string) (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("in-cluster configuration: %w", err)
	}
	cfg := &Config{
		Host:        "https://" + net.JoinHostPort(host, port),
		BearerToken: string(trimSpace(token)), BearerTokenFile: tokenFile,
	}
	caFile := filepath.Join(dir, "ca.crt")
	if _, err := os.Stat(caFile); err == nil {
		cfg.TLS.CAFile = caFile
	}
	if ns, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
		cfg.Namespace = string(trimSpace(ns))
	}
	return cfg, nil
}
