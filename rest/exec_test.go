package rest_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// buildPlugin builds testdata/execplugin into a temporary directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "execplugin")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/execplugin").CombinedOutput()
	if err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	return bin
}

// pluginRun is what the plugin recorded of one run.
type pluginRun struct {
	Info string
	Args []string
	Env  string
}

func pluginRuns(t *testing.T, dir string) []pluginRun {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	var runs []pluginRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r pluginRun
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// whoAmI asks the server who the client is (a SelfSubjectReview).
func whoAmI(ctx context.Context, c *rest.Client) (authenticationv1.UserInfo, error) {
	ssr := rest.For[*authenticationv1.SelfSubjectReview, *metav1.List](c,
		authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"), false)
	r, err := ssr.Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// execKubeconfig writes a kubeconfig for srv whose user runs the plugin.
func execKubeconfig(t *testing.T, srv *testserver.Server, dir, plugin, apiVersion, extra string) string {
	t.Helper()
	src, err := rest.ConfigFromKubeconfig(srv.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(src.TLS.CAFile)
	if len(src.TLS.CAData) > 0 {
		ca, err = src.TLS.CAData, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	caData, _ := json.Marshal(ca)
	kc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + srv.URL + `
    certificate-authority-data: ` + strings.Trim(string(caData), `"`) + `
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: setpoint}
users:
- name: u
  user:
    exec:
      command: ` + quote(plugin) + `
      apiVersion: ` + apiVersion + `
      args: [--flag, value]
      env:
      - {name: PLUGIN_DIR, value: ` + quote(dir) + `}
      - {name: PLUGIN_API_VERSION, value: ` + apiVersion + `}
      - {name: PLUGIN_ENV, value: from-kubeconfig}
` + extra + `
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, path, kc)
	return path
}

// TestExecPlugin runs a real plugin executable from a kubeconfig: its
// token authenticates, it runs once while its credentials last, again
// once they expire and after a 401; it receives KUBERNETES_EXEC_INFO (with
// the cluster when provideClusterInfo), its args and env; a client
// certificate it returns authenticates; its failures are client-go's
// errors.
func TestExecPlugin(t *testing.T) {
	plugin := buildPlugin(t)
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()

	t.Run("v1 token, cached until expiry, re-run on 401", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "tokens"), srv.Token+"\nbogus\n"+srv.Token+"\n")
		clk := clocktesting.NewFakeClock(time.Now())
		writeFile(t, filepath.Join(dir, "expiry"), clk.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		cfg, err := rest.ConfigFromKubeconfig(execKubeconfig(t, srv, dir, plugin, "client.authentication.k8s.io/v1", "      interactiveMode: Never"), "")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Clock = clk
		c, err := rest.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		for range 3 {
			if u, err := whoAmI(ctx, c); err != nil || u.Username != "setpoint-admin" {
				t.Fatalf("whoami: %+v, %v", u, err)
			}
		}
		runs := pluginRuns(t, dir)
		if len(runs) != 1 {
			t.Fatalf("%d runs for cached credentials, want 1", len(runs))
		}
		if runs[0].Info != `{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}`+"\n" ||
			strings.Join(runs[0].Args, " ") != "--flag value" || runs[0].Env != "from-kubeconfig" {
			t.Errorf("run: %+v", runs[0])
		}
		// Expired: run again, which gives the bogus token; the 401 runs it
		// a third time, and the request succeeds with that token.
		clk.Step(time.Hour + time.Second)
		writeFile(t, filepath.Join(dir, "expiry"), clk.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		if u, err := whoAmI(ctx, c); err != nil || u.Username != "setpoint-admin" {
			t.Fatalf("whoami after expiry: %+v, %v", u, err)
		}
		if n := len(pluginRuns(t, dir)); n != 3 {
			t.Errorf("%d runs after expiry and a 401, want 3", n)
		}
	})

	t.Run("v1beta1 client certificate with cluster info", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := srv.API.CA().EnsureClient(dir, "carol", "carol", []string{"qa"}); err != nil {
			t.Fatal(err)
		}
		certPEM, keyPEM := readFile(t, filepath.Join(dir, "pki", "carol.crt")), readFile(t, filepath.Join(dir, "pki", "carol.key"))
		writeFile(t, filepath.Join(dir, "cert.pem"), certPEM)
		writeFile(t, filepath.Join(dir, "key.pem"), keyPEM)
		cfg, err := rest.ConfigFromKubeconfig(execKubeconfig(t, srv, dir, plugin, "client.authentication.k8s.io/v1beta1", "      provideClusterInfo: true"), "")
		if err != nil {
			t.Fatal(err)
		}
		c, err := rest.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		if u, err := whoAmI(ctx, c); err != nil || u.Username != "carol" || strings.Join(u.Groups, ",") != "qa,system:authenticated" {
			t.Fatalf("whoami: %+v, %v", u, err)
		}
		var info struct {
			APIVersion string
			Spec       struct {
				Interactive bool
				Cluster     struct {
					Server                   string
					CertificateAuthorityData []byte `json:"certificate-authority-data"`
					Config                   map[string]string
				}
			}
		}
		runs := pluginRuns(t, dir)
		if err := json.Unmarshal([]byte(runs[0].Info), &info); err != nil {
			t.Fatal(err)
		}
		if info.APIVersion != "client.authentication.k8s.io/v1beta1" || info.Spec.Cluster.Server != srv.URL ||
			!strings.Contains(string(info.Spec.Cluster.CertificateAuthorityData), "BEGIN CERTIFICATE") || info.Spec.Cluster.Config["audience"] != "setpoint" {
			t.Errorf("exec info: %s", runs[0].Info)
		}
	})

	t.Run("failures", func(t *testing.T) {
		dir := t.TempDir()
		for name, c := range map[string]struct {
			cfg  rest.ExecConfig
			want string
		}{
			"missing command": {rest.ExecConfig{Command: "setpoint-no-such-plugin", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: "Never", InstallHint: "install nope"},
				"exec: executable setpoint-no-such-plugin not found\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\n" +
					"To learn more about this feature, consult the documentation available at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins\n\ninstall nope"},
			"wrong version": {rest.ExecConfig{Command: plugin, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: "Never",
				Env: []rest.ExecEnvVar{{Name: "PLUGIN_DIR", Value: dir}, {Name: "PLUGIN_API_VERSION", Value: "client.authentication.k8s.io/v1beta1"}}},
				"exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1"},
			"exit code": {rest.ExecConfig{Command: plugin, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: "Never",
				Env: []rest.ExecEnvVar{{Name: "PLUGIN_DIR", Value: t.TempDir()}}}, "exec: executable " + plugin + " failed with exit code 3"},
		} {
			writeFile(t, filepath.Join(dir, "tokens"), "x\n")
			cl, err := rest.New(&rest.Config{Host: srv.URL, TLS: rest.TLSConfig{Insecure: true}, ExecProvider: &c.cfg})
			if err != nil {
				t.Fatal(err)
			}
			_, err = whoAmI(ctx, cl)
			if err == nil || !strings.HasSuffix(err.Error(), c.want) {
				t.Errorf("%s: %v, want …%q", name, err, c.want)
			}
			cl.CloseIdleConnections()
		}
		if _, err := rest.New(&rest.Config{Host: srv.URL, ExecProvider: &rest.ExecConfig{Command: plugin, APIVersion: "client.authentication.k8s.io/v1"}}); err == nil {
			t.Error("a v1 plugin without interactiveMode was accepted")
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
