package pki

import (
	"fmt"

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
		Server                   string `json:"server"`
		CertificateAuthorityData []byte `json:"certificate-authority-data"`
	} `json:"cluster"`
}

type namedUser struct {
	Name string `json:"name"`
	User struct {
		Token string `json:"token"`
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
// trusting caPEM and authenticating with token.
func WriteKubeconfig(path, server string, caPEM []byte, token string) error {
	const name = "setpoint"
	kc := kubeconfig{APIVersion: "v1", Kind: "Config", CurrentContext: name}
	var c namedCluster
	c.Name = name
	c.Cluster.Server = server
	c.Cluster.CertificateAuthorityData = caPEM
	var u namedUser
	u.Name = name + "-admin"
	u.User.Token = token
	var x namedContext
	x.Name = name
	x.Context.Cluster = name
	x.Context.User = u.Name
	x.Context.Namespace = "default"
	kc.Clusters, kc.Users, kc.Contexts = []namedCluster{c}, []namedUser{u}, []namedContext{x}
	data, err := yaml.Marshal(kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	return writeFileAtomic(path, data, 0o600)
}
