package sampleapiserver

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// manifests registers the sample API server listening at ip:port as the
// Service wardle/api, reached through a hand-made EndpointSlice, with the
// APIService of wardle.example.com/v1alpha1 trusting caPEM.
func manifests(ip string, port int, caPEM []byte) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: wardle
---
apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: wardle
spec:
  ports:
  - name: https
    port: 443
    targetPort: %[2]d
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: api-host
  namespace: wardle
  labels:
    kubernetes.io/service-name: api
addressType: IPv4
endpoints:
- addresses: ["%[1]s"]
  conditions: {ready: true}
ports:
- name: https
  port: %[2]d
  protocol: TCP
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.wardle.example.com
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  caBundle: %[3]s
  service:
    name: api
    namespace: wardle
`, ip, port, base64.StdEncoding.EncodeToString(caPEM))
}

const flunder = `apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: %s
  namespace: wardle
  labels:
    sample: setpoint
spec:
  reference: other-flunder
`

// TestSampleAPIServer: Kubernetes' sample API server, registered by an
// APIService, is served through setpoint to the real kubectl: the
// APIService turns Available, discovery and OpenAPI list the group, and
// flunders are created, read, listed, watched and deleted.
func TestSampleAPIServer(t *testing.T) {
	etcd := startEtcd(t)
	c := startCluster(t, 0)
	ip := hostIP(t)
	port := freePort(t, ip)
	caPEM, certFile, keyFile := servingCert(t, t.TempDir(), ip, "api.wardle.svc")
	sample := start(t, "sample-apiserver", sampleBin, "--etcd-servers", etcd,
		"--bind-address", ip, "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", certFile, "--tls-private-key-file", keyFile,
		"--authentication-kubeconfig", c.kubeconfig, "--authorization-kubeconfig", c.kubeconfig, "--kubeconfig", c.kubeconfig)
	waitFor(t, "the sample API server", 120*time.Second, sample, func() bool { return httpsUp(fmt.Sprintf("%s:%d", ip, port), "/readyz") })

	c.must(t, manifests(ip, port, caPEM), "apply", "-f", "-")
	waitFor(t, "the APIService to be Available", 60*time.Second, sample, func() bool {
		out, _ := c.kubectl(t, "", "get", "apiservice", "v1alpha1.wardle.example.com",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}`)
		return out == "True Passed"
	})
	if out := c.must(t, "", "get", "apiservice", "v1alpha1.wardle.example.com"); !strings.Contains(out, "wardle/api") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get apiservice:\n%s", out)
	}

	// Discovery (kubectl's aggregated discovery) and OpenAPI v3 (explain).
	waitFor(t, "the group in discovery", 30*time.Second, nil, func() bool {
		out, _ := c.kubectl(t, "", "api-resources", "--api-group=wardle.example.com")
		return strings.Contains(out, "flunders") && strings.Contains(out, "wardle.example.com/v1alpha1")
	})
	if out := c.must(t, "", "get", "--raw", "/apis"); !strings.Contains(out, `"name":"wardle.example.com"`) {
		t.Errorf("/apis lacks wardle.example.com: %s", out)
	}
	waitFor(t, "kubectl explain flunders", 30*time.Second, nil, func() bool {
		out, _ := c.kubectl(t, "", "explain", "flunders.spec")
		return strings.Contains(out, "KIND:") && strings.Contains(out, "Flunder") && strings.Contains(out, "reference")
	})

	empty := exec.Command("kubectl", "--kubeconfig", c.kubeconfig, "get", "flunders", "-n", "wardle")
	if out, err := empty.CombinedOutput(); err != nil || !strings.Contains(string(out), "No resources found in wardle namespace.") {
		t.Errorf("empty list: %v %q", err, out)
	}
	c.must(t, fmt.Sprintf(flunder, "my-first-flunder"), "create", "-f", "-")
	if out := c.must(t, "", "get", "flunders", "-n", "wardle"); !strings.Contains(out, "my-first-flunder") {
		t.Errorf("kubectl get flunders:\n%s", out)
	}
	if out := c.must(t, "", "get", "flunder", "my-first-flunder", "-n", "wardle", "-o", "jsonpath={.spec.reference}"); out != "other-flunder" {
		t.Errorf("get: spec.reference %q", out)
	}
	if out := c.must(t, "", "get", "flunders", "-A", "-l", "sample=setpoint", "-o", "name"); strings.TrimSpace(out) != "flunder.wardle.example.com/my-first-flunder" {
		t.Errorf("list by label: %q", out)
	}

	// A watch through setpoint sees a create and a delete as they happen.
	watch := exec.Command("kubectl", "--kubeconfig", c.kubeconfig, "get", "flunders", "-n", "wardle", "--watch-only", "--output-watch-events", "--no-headers")
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	events := make(chan string, 10)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			events <- strings.Join(strings.Fields(s.Text()), " ")
		}
		close(events)
	}()
	time.Sleep(2 * time.Second) // the watch is established
	c.must(t, fmt.Sprintf(flunder, "watched"), "create", "-f", "-")
	c.must(t, "", "delete", "flunder", "watched", "-n", "wardle")
	for _, want := range []string{"ADDED watched", "DELETED watched"} {
		if got := nextEvent(t, events, "watched"); !strings.HasPrefix(got, want+" ") {
			t.Errorf("watch event %q, want %q", got, want)
		}
	}

	c.must(t, "", "delete", "flunder", "my-first-flunder", "-n", "wardle")
	out, err := c.kubectl(t, "", "get", "flunder", "my-first-flunder", "-n", "wardle")
	if err == nil || !strings.Contains(out, `flunders.wardle.example.com "my-first-flunder" not found`) {
		t.Errorf("get after delete: %v %s", err, out)
	}
}

// nextEvent returns the next watch line about name (10 s).
func nextEvent(t *testing.T, events <-chan string, name string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return "the watch ended"
			}
			if f := strings.Fields(ev); len(f) > 1 && f[1] == name {
				return ev
			}
		case <-timeout:
			return "no event"
		}
	}
}
