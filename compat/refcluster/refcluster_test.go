package refcluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/version"

	"github.com/setpoint-dev/setpoint/compat/refcluster"
)

// TestReference starts etcd, kube-apiserver and kube-controller-manager
// and checks that it is v1.37.2, that kubectl reaches it with the admin
// kubeconfig, and that a new namespace gets its default ServiceAccount so
// that a Pod can be created in it.
func TestReference(t *testing.T) {
	ref := refcluster.StartT(t, refcluster.Options{ControllerManager: true})

	info := getVersion(t, ref.HTTPClient(), ref.URL())
	if info.GitVersion != refcluster.Version || info.Major != "1" || info.Minor != "37" {
		t.Fatalf("/version = %+v, want %s (major 1, minor 37)", info, refcluster.Version)
	}

	k := newKubectl(t, ref.Kubeconfig())
	out := k.run("get", "ns", "-o", "name")
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if !strings.Contains(out, "namespace/"+ns+"\n") {
			t.Errorf("kubectl get ns lacks %s:\n%s", ns, out)
		}
	}

	k.run("create", "namespace", "smoke")
	waitFor(t, 30*time.Second, func() bool {
		_, err := k.try("-n", "smoke", "get", "serviceaccount", "default")
		return err == nil
	})
	k.run("-n", "smoke", "run", "p", "--image=registry.k8s.io/pause:3.10", "--restart=Never")
	if got := k.run("-n", "smoke", "get", "pod", "p", "-o", "jsonpath={.spec.serviceAccountName}"); got != "default" {
		t.Errorf("pod's serviceAccountName = %q, want default", got)
	}
}

// TestTokenAndCA reaches the cluster with curl-style credentials: the CA
// file and the bearer token; without the token the request is anonymous
// and forbidden.
func TestTokenAndCA(t *testing.T) {
	ref := refcluster.StartT(t, refcluster.Options{})
	ca, err := os.ReadFile(ref.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	client := clientTrusting(t, ca)
	for _, tc := range []struct {
		token string
		want  int
	}{{ref.Token(), http.StatusOK}, {"", http.StatusForbidden}, {"wrong", http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodGet, ref.URL()+"/api/v1/namespaces", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("token %q: GET /api/v1/namespaces = %d, want %d", tc.token, resp.StatusCode, tc.want)
		}
	}
}

func getVersion(t *testing.T, client *http.Client, base string) version.Info {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/version", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/version = %d: %s", base, resp.StatusCode, body)
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatalf("GET %s/version: %v: %s", base, err, body)
	}
	return info
}

// kubectlCmd runs kubectl ($KUBECTL, else the one on PATH) against one
// kubeconfig.
type kubectlCmd struct {
	t          *testing.T
	bin        string
	kubeconfig string
}

func newKubectl(t *testing.T, kubeconfig string) *kubectlCmd {
	t.Helper()
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		p, err := exec.LookPath("kubectl")
		if err != nil {
			t.Fatal("kubectl not found: install it or set KUBECTL")
		}
		bin = p
	}
	return &kubectlCmd{t: t, bin: bin, kubeconfig: kubeconfig}
}

// try runs kubectl and returns its combined output.
func (k *kubectlCmd) try(args ...string) (string, error) {
	out, err := exec.Command(k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// run runs kubectl and fails the test if it fails.
func (k *kubectlCmd) run(args ...string) string {
	k.t.Helper()
	out, err := k.try(args...)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
