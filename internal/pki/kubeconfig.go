package pki

import (
	"fmt"
	"net/url"
	"slices"

	"sigs.k8s.io/yaml"
)

// The kubeconfig schema (clientcmd v1), written by hand: only the fields we
// emit.
type kubeconfig struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Clusters       []namedCluster `json:"clusters"`
	Users          []namedUser    `json:"users"`
	Contexts       []namedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
}

type namedCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server                   string           `json:"server"`
		CertificateAuthorityData []byte           `json:"certificate-authority-data"`
		Extensions               []namedExtension `json:"extensions,omitempty"`
	} `json:"cluster"`
}

// FailoverExtension names the cluster extension listing the other API
// servers of the same cluster (same CA, same credentials). kubectl ignores
// it; setpoint's rest client fails over to those servers in order.
const FailoverExtension = "setpoint.dev/failover"

type namedExtension struct {
	Name      string `json:"name"`
	Extension struct {
		Servers []string `json:"servers"`
	} `json:"extension"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		Token                 string `json:"token,omitempty"`
		ClientCertificateData []byte `json:"client-certificate-data,omitempty"`
		ClientKeyData         []byte `json:"client-key-data,omitempty"`
	} `json:"user"`
}

type namedContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster   string `json:"cluster"`
		User      string `json:"user"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"context"`
}

// WriteKubeconfig writes an admin kubeconfig for server (an https URL)
// trusting caPEM and authenticating with token. peers are the URLs of
// every API server sharing these credentials (server among them or not).
// The current context "setpoint" names server; every other peer gets its
// own cluster and context "setpoint-<host:port>" with the same CA and
// user, so kubectl --context reaches it. Each cluster carries the
// FailoverExtension listing the other servers.
func WriteKubeconfig(path, server string, peers []string, caPEM []byte, token string) error {
	var u namedUser
	u.Name = "setpoint-admin"
	u.User.Token = token
	return writeKubeconfig(path, server, peers, caPEM, u)
}

// WriteClientKubeconfig writes a kubeconfig like WriteKubeconfig's whose
// user (named user) authenticates with a client certificate and key (PEM).
func WriteClientKubeconfig(path, server string, peers []string, caPEM []byte, user string, certPEM, keyPEM []byte) error {
	var u namedUser
	u.Name = user
	u.User.ClientCertificateData, u.User.ClientKeyData = certPEM, keyPEM
	return writeKubeconfig(path, server, peers, caPEM, u)
}

func writeKubeconfig(path, server string, peers []string, caPEM []byte, u namedUser) error {
	const name = "setpoint"
	kc := kubeconfig{APIVersion: "v1", Kind: "Config", CurrentContext: name}
	kc.Users = []namedUser{u}
	all := []string{server}
	for _, p := range peers {
		if !slices.Contains(all, p) {
			all = append(all, p)
		}
	}
	for i, srv := range all {
		cname := name
		if i > 0 {
			cname = name + "-" + hostPort(srv)
		}
		var c namedCluster
		c.Name = cname
		c.Cluster.Server = srv
		c.Cluster.CertificateAuthorityData = caPEM
		if len(all) > 1 {
			var ext namedExtension
			ext.Name = FailoverExtension
			ext.Extension.Servers = slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == srv })
			c.Cluster.Extensions = []namedExtension{ext}
		}
		var x namedContext
		x.Name = cname
		x.Context.Cluster = cname
		x.Context.User = u.Name
		x.Context.Namespace = "default"
		kc.Clusters = append(kc.Clusters, c)
		kc.Contexts = append(kc.Contexts, x)
	}
	data, err := yaml.Marshal(kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return writeFileAtomic(path, data, 0o600)
}

func hostPort(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	return server
}
