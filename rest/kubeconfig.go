package rest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The subset of the kubeconfig (clientcmd v1) schema that we read.
type kubeconfig struct {
	Clusters []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData []byte `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
			DisableCompression       bool   `json:"disable-compression"`
			Extensions               []struct {
				Name      string          `json:"name"`
				Extension json.RawMessage `json:"extension"`
			} `json:"extensions"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token                 string `json:"token"`
			TokenFile             string `json:"tokenFile"`
			ClientCertificate     string `json:"client-certificate"`
			ClientCertificateData []byte `json:"client-certificate-data"`
			ClientKey             string `json:"client-key"`
			ClientKeyData         []byte `json:"client-key-data"`
			Exec                  *struct {
				Command            string       `json:"command"`
				Args               []string     `json:"args"`
				Env                []ExecEnvVar `json:"env"`
				APIVersion         string       `json:"apiVersion"`
				InstallHint        string       `json:"installHint"`
				ProvideClusterInfo bool         `json:"provideClusterInfo"`
				InteractiveMode    string       `json:"interactiveMode"`
			} `json:"exec"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster   string `json:"cluster"`
			User      string `json:"user"`
			Namespace string `json:"namespace"`
		} `json:"context"`
	} `json:"contexts"`
	CurrentContext string `json:"current-context"`
}

// FailoverExtension names the kubeconfig cluster extension that lists the
// other API servers of the same cluster, as setpoint writes it:
//
//	clusters:
//	- name: setpoint
//	  cluster:
//	    server: https://10.0.0.1:6443
//	    certificate-authority-data: ...
//	    extensions:
//	    - name: setpoint.dev/failover
//	      extension:
//	        servers: [https://10.0.0.2:6443]
//
// The loaded Config's Hosts are those servers (the same CA, TLS settings
// and user apply). kubectl ignores the extension and uses server alone.
const FailoverExtension = "setpoint.dev/failover"

// ConfigFromKubeconfig reads the kubeconfig file at path and returns the
// Config of the named context ("" selects current-context). Relative file
// references (certificate-authority, client-certificate, client-key,
// tokenFile) are resolved against the kubeconfig's directory, as kubectl
// does. A token file is read once, here.
func ConfigFromKubeconfig(path, context string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig path: %w", err)
	}
	cfg, err := configFromBytes(data, context, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// ConfigFromKubeconfigBytes is ConfigFromKubeconfig on an in-memory
// kubeconfig; relative file references resolve against the working
// directory.
func ConfigFromKubeconfigBytes(data []byte, context string) (*Config, error) {
	return configFromBytes(data, context, "")
}

// LoadDefault loads the current context of the default kubeconfig: the
// first entry of $KUBECONFIG (a path list) when set, else ~/.kube/config.
func LoadDefault() (*Config, error) {
	return ConfigFromKubeconfig(defaultKubeconfigPath(os.Getenv("KUBECONFIG")), "")
}

func defaultKubeconfigPath(env string) string {
	for _, p := range filepath.SplitList(env) {
		if p != "" {
			return p
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return filepath.Join(home, ".kube", "config")
}

func configFromBytes(data []byte, context, dir string) (*Config, error) {
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if context == "" {
		context = kc.CurrentContext
	}
	if context == "" {
		return nil, fmt.Errorf("no context given and no current-context set")
	}
	ci := -1
	for i := range kc.Contexts {
		if kc.Contexts[i].Name == context {
			ci = i
		}
	}
	if ci < 0 {
		return nil, fmt.Errorf("context %q not found", context)
	}
	ctx := kc.Contexts[ci].Context
	cfg := &Config{Namespace: ctx.Namespace}
	found := false
	var execExtension json.RawMessage
	for _, c := range kc.Clusters {
		if c.Name != ctx.Cluster {
			continue
		}
		found = true
		cl := c.Cluster
		cfg.Host = cl.Server
		cfg.TLS.CAData, cfg.TLS.CAFile = cl.CertificateAuthorityData, resolve(dir, cl.CertificateAuthority)
		cfg.TLS.Insecure, cfg.TLS.ServerName = cl.InsecureSkipTLSVerify, cl.TLSServerName
		cfg.DisableCompression = cl.DisableCompression
		for _, ext := range cl.Extensions {
			switch ext.Name {
			case FailoverExtension:
				var f struct {
					Servers []string `json:"servers"`
				}
				if err := json.Unmarshal(ext.Extension, &f); err != nil {
					return nil, fmt.Errorf("cluster %q: extension %s: %w", ctx.Cluster, ext.Name, err)
				}
				cfg.Hosts = append(cfg.Hosts, f.Servers...)
			case execClusterExtension:
				execExtension = ext.Extension
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("context %q: cluster %q not found", context, ctx.Cluster)
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("cluster %q has no server", ctx.Cluster)
	}
	if ctx.User == "" {
		return cfg, nil
	}
	for _, u := range kc.Users {
		if u.Name != ctx.User {
			continue
		}
		us := u.User
		cfg.BearerToken, cfg.BearerTokenFile = us.Token, resolve(dir, us.TokenFile)
		cfg.TLS.CertData, cfg.TLS.CertFile = us.ClientCertificateData, resolve(dir, us.ClientCertificate)
		cfg.TLS.KeyData, cfg.TLS.KeyFile = us.ClientKeyData, resolve(dir, us.ClientKey)
		if x := us.Exec; x != nil {
			cfg.ExecProvider = &ExecConfig{Command: resolveCommand(dir, x.Command), Args: x.Args, Env: x.Env, APIVersion: x.APIVersion,
				InstallHint: x.InstallHint, ProvideClusterInfo: x.ProvideClusterInfo, InteractiveMode: x.InteractiveMode, Config: execExtension}
		}
		tok, err := cfg.bearerToken()
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", ctx.User, err)
		}
		cfg.BearerToken = tok
		return cfg, nil
	}
	return nil, fmt.Errorf("context %q: user %q not found", context, ctx.User)
}

// execClusterExtension is the cluster extension passed to exec plugins
// in spec.cluster.config.
const execClusterExtension = "client.authentication.k8s.io/exec"

// resolveCommand resolves an exec plugin's command as kubectl does: a
// relative path with a separator against the kubeconfig's directory; a
// bare name is looked up in PATH when run.
func resolveCommand(dir, cmd string) string {
	if strings.ContainsRune(cmd, filepath.Separator) {
		return resolve(dir, cmd)
	}
	return cmd
}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
