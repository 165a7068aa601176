package rest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/setpoint-dev/setpoint/rest"
)

const multiContext = `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: one
  cluster:
    server: https://one.example:6443
    certificate-authority: ca.pem
    tls-server-name: api.one
- name: two
  cluster:
    server: https://two.example
    insecure-skip-tls-verify: true
    disable-compression: true
users:
- name: tok
  user:
    tokenFile: token
- name: cert
  user:
    client-certificate: /abs/client.crt
    client-key-data: a2V5
contexts:
- name: a
  context: {cluster: one, user: tok, namespace: team-a}
- name: b
  context: {cluster: two, user: cert}
- name: broken
  context: {cluster: missing, user: tok}
`

func TestKubeconfigContexts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(multiContext), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := rest.ConfigFromKubeconfig(path, "")
	if err != nil {
		t.Fatalf("current context: %v", err)
	}
	if a.Host != "https://one.example:6443" || a.Namespace != "team-a" || a.BearerToken != "s3cret" ||
		a.TLS.CAFile != filepath.Join(dir, "ca.pem") || a.TLS.ServerName != "api.one" || a.DisableCompression {
		t.Errorf("context a = %+v", a)
	}
	b, err := rest.ConfigFromKubeconfig(path, "b")
	if err != nil {
		t.Fatalf("context b: %v", err)
	}
	if !b.TLS.Insecure || !b.DisableCompression || b.TLS.CertFile != "/abs/client.crt" || string(b.TLS.KeyData) != "key" || b.BearerToken != "" {
		t.Errorf("context b = %+v", b)
	}
	for _, name := range []string{"broken", "nope"} {
		if _, err := rest.ConfigFromKubeconfig(path, name); err == nil {
			t.Errorf("context %q: want an error", name)
		}
	}
	if _, err := rest.ConfigFromKubeconfigBytes([]byte("clusters: []"), ""); err == nil {
		t.Error("no current-context: want an error")
	}
}

func TestLoadDefaultUsesFirstKubeconfigEntry(t *testing.T) {
	srv, _ := start(t, nil)
	t.Setenv("KUBECONFIG", srv.Kubeconfig+string(os.PathListSeparator)+"/does/not/exist")
	cfg, err := rest.LoadDefault()
	if err != nil {
		t.Fatalf("LoadDefault: %v", err)
	}
	if cfg.Host != srv.URL || cfg.BearerToken != srv.Token || len(cfg.TLS.CAData) == 0 {
		t.Errorf("LoadDefault = host %q token set %v CA %d bytes", cfg.Host, cfg.BearerToken != "", len(cfg.TLS.CAData))
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]rest.Config{
		"no scheme":          {Host: "localhost:6443"},
		"bad CA":             {Host: "https://x", TLS: rest.TLSConfig{CAData: []byte("not pem")}},
		"missing CA file":    {Host: "https://x", TLS: rest.TLSConfig{CAFile: filepath.Join(dir, "none")}},
		"cert without key":   {Host: "https://x", TLS: rest.TLSConfig{CertData: []byte("x")}},
		"missing token file": {Host: "https://x", BearerTokenFile: filepath.Join(dir, "none")},
	}
	for name, cfg := range cases {
		if _, err := rest.New(&cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}
