package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

const applicationX = `apiVersion: apps.setpoint.dev/v1
kind: Application
metadata:
  name: x
  namespace: default
spec:
  image: nginx:1.25
  replicas: 2
  port: 8080
`

// TestApplicationOperator is issue 6's "done when" for the seeds'
// Application operator: with real kubectl against `setpoint up`, the CRD
// of examples/application/config/crd.yaml is applied and established, the
// operator binary runs with leader election, and an Application gets its
// Deployment, Service and record, reaches phase Running (kubectl wait on
// a jsonpath), shows its printer columns, scales through the scale
// subresource, shows its events in describe, and on deletion its
// finalizer removes the record before the garbage collector removes the
// Deployment and Service. SIGTERM ends the operator with status 0.
func TestApplicationOperator(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2)
	cl.kubectl(t, "", "apply", "-f", "../examples/application/config/crd.yaml")
	cl.kubectl(t, "", "wait", "--for=condition=Established", "--timeout=30s", "crd/applications.apps.setpoint.dev")

	metricsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ex := startOperator(t, "application/cmd/application", "application operator running", "--kubeconfig", cl.kubeconfig, "--leader-elect",
		"--metrics-addr", metricsAddr, "--health-addr", "0")

	cl.kubectl(t, applicationX, "apply", "-f", "-")
	cl.kubectl(t, "", "wait", "--for=jsonpath={.status.phase}=Running", "--timeout=60s", "application/x")
	uid := strings.TrimSpace(cl.kubectl(t, "", "get", "app", "x", "-o", "jsonpath={.metadata.uid}"))
	checkOwned(t, cl, "deployment", uid)
	checkOwned(t, cl, "service", uid)
	if data := cl.kubectl(t, "", "get", "configmap", "-n", "setpoint-records", "application-default-x", "-o", "jsonpath={.data.uid}"); data != uid {
		t.Fatalf("record uid %q, want %q", data, uid)
	}

	table := cl.kubectl(t, "", "get", "applications")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME IMAGE DESIRED READY PHASE AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "x nginx:1.25 2 2 Running ") {
		t.Fatalf("kubectl get applications:\n%s", table)
	}

	cl.kubectl(t, "", "scale", "application", "x", "--replicas=3")
	cl.kubectl(t, "", "wait", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s", "application/x")
	cl.kubectl(t, "", "wait", "--for=jsonpath={.status.phase}=Running", "--timeout=60s", "application/x")
	if r := cl.kubectl(t, "", "get", "deployment", "x", "-o", "jsonpath={.spec.replicas}"); r != "3" {
		t.Fatalf("deployment replicas %q after scaling the application", r)
	}
	if r := cl.kubectl(t, "", "get", "app", "x", "-o", "jsonpath={.status.observedGeneration}/{.metadata.generation}"); r != "2/2" {
		t.Fatalf("observedGeneration/generation = %s", r)
	}

	eventually(t, 30*time.Second, "events in describe", func() string {
		out := cl.kubectl(t, "", "describe", "application", "x")
		for _, want := range []string{"Created Deployment x", "Created Service x", "Updated Deployment x", "3 of 3 replicas ready"} {
			if !strings.Contains(out, want) {
				return fmt.Sprintf("no %q in:\n%s", want, out)
			}
		}
		return ""
	})

	checkApplicationMetrics(t, metricsAddr, `controller_runtime_reconcile_total{controller="application-operator",result="success"}`)

	// kubectl delete waits until the finalizer is released.
	cl.kubectl(t, "", "delete", "application", "x", "--timeout=60s")
	if _, errOut, err := cl.kubectlErr(t, "", "get", "configmap", "-n", "setpoint-records", "application-default-x"); err == nil || !strings.Contains(errOut, "NotFound") {
		t.Fatalf("record still there after the application went: %v %s", err, errOut)
	}
	if out := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.uid="+uid,
		"-o", "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}"); !strings.Contains(out, "Cleanup\n") {
		t.Errorf("no Cleanup event; reasons: %q", out)
	}
	waitNoService(t, cl, "x")
	eventually(t, 60*time.Second, "deployment x gone", func() string {
		if _, errOut, err := cl.kubectlErr(t, "", "get", "deployment", "x"); err == nil || !strings.Contains(errOut, "NotFound") {
			return "still there " + errOut
		}
		return ""
	})
	ex.stop(t)
}

// checkOwned checks that kind/x has one controller reference, to the
// Application of uid.
func checkOwned(t *testing.T, cl *upCluster, kind, uid string) {
	t.Helper()
	var obj struct {
		Metadata struct {
			OwnerReferences []struct {
				APIVersion, Kind, Name, UID    string
				Controller, BlockOwnerDeletion bool
			} `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(cl.kubectl(t, "", "get", kind, "x", "-o", "json")), &obj); err != nil {
		t.Fatal(err)
	}
	refs := obj.Metadata.OwnerReferences
	if len(refs) != 1 || refs[0].APIVersion != "apps.setpoint.dev/v1" || refs[0].Kind != "Application" || refs[0].Name != "x" ||
		refs[0].UID != uid || !refs[0].Controller || !refs[0].BlockOwnerDeletion {
		t.Fatalf("%s x ownerReferences %+v", kind, refs)
	}
}

// checkApplicationMetrics reads /metrics at addr and expects the series want.
func checkApplicationMetrics(t *testing.T, addr, want string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	if !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s", want)
	}
}
