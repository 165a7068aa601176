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

	corev1 "k8s.io/api/core/v1"
)

const autoServiceDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations:
    auto-service: "true"
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
        tier: frontend
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - name: http
          containerPort: 8080
        - name: metrics
          containerPort: 9090
`

// TestAutoService is issue 6's "done when" for seed 000's auto-service
// controller: the example binary runs against `setpoint up` with leader
// election, and real kubectl drives it. An annotated Deployment gets its
// Service; a deleted or edited Service is restored; removing the
// annotation deletes it and setting it again brings it back; deleting the
// Deployment removes it through the garbage collector. Events, the leader
// Lease and the controller's metrics are visible, and SIGTERM ends it with
// status 0.
func TestAutoService(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 1)
	metricsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ex := startOperator(t, "autoservice/cmd/autoservice", "autoservice controller running", "--kubeconfig", cl.kubeconfig, "--leader-elect",
		"--metrics-addr", metricsAddr, "--health-addr", "0")

	cl.kubectl(t, autoServiceDeployment, "apply", "-f", "-")
	deployUID := strings.TrimSpace(cl.kubectl(t, "", "get", "deployment", "web", "-o", "jsonpath={.metadata.uid}"))
	first := waitAutoService(t, cl, deployUID, "")

	// Deleted: it comes back (a new object).
	cl.kubectl(t, "", "delete", "service", "web-service")
	second := waitAutoService(t, cl, deployUID, string(first.UID))

	// Edited by hand: restored in place.
	cl.kubectl(t, "", "patch", "service", "web-service", "--type=merge",
		"-p", `{"spec":{"selector":{"app":"other"},"ports":[{"port":1234,"targetPort":1234}]}}`)
	if restored := waitAutoService(t, cl, deployUID, ""); restored.UID != second.UID {
		t.Fatalf("the edited service was replaced (uid %s, was %s), not restored", restored.UID, second.UID)
	}

	// The annotation removed: the Service goes; set again: it is back.
	cl.kubectl(t, "", "annotate", "deployment", "web", "auto-service-")
	waitNoService(t, cl, "web-service")
	cl.kubectl(t, "", "annotate", "deployment", "web", "auto-service=true")
	waitAutoService(t, cl, deployUID, string(second.UID))

	eventually(t, 30*time.Second, "events on the deployment", func() string {
		events := cl.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.uid="+deployUID,
			"-o", "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}")
		for _, reason := range []string{"ServiceCreated", "ServiceUpdated", "ServiceDeleted"} {
			if !strings.Contains(events, reason+"\n") {
				return fmt.Sprintf("no %s event; reasons: %q", reason, events)
			}
		}
		return ""
	})
	if holder := cl.kubectl(t, "", "get", "lease", "auto-service", "-o", "jsonpath={.spec.holderIdentity}"); holder == "" {
		t.Error("lease default/auto-service has no holder")
	}
	checkAutoServiceMetrics(t, metricsAddr)

	// The Deployment deleted: the garbage collector removes the Service.
	cl.kubectl(t, "", "delete", "deployment", "web")
	waitNoService(t, cl, "web-service")
	ex.stop(t)
}

// waitAutoService waits until web-service is the Service the Deployment
// (uid deployUID) asks for, and is not the object notUID; it returns it.
func waitAutoService(t *testing.T, cl *upCluster, deployUID, notUID string) *corev1.Service {
	t.Helper()
	var svc corev1.Service
	eventually(t, 60*time.Second, "web-service as the deployment wants it", func() string {
		out, errOut, err := cl.kubectlErr(t, "", "get", "service", "web-service", "-o", "json")
		if err != nil {
			return strings.TrimSpace(errOut)
		}
		svc = corev1.Service{}
		if err := json.Unmarshal([]byte(out), &svc); err != nil {
			return err.Error()
		}
		return autoServiceMismatch(&svc, deployUID, notUID)
	})
	return &svc
}

func autoServiceMismatch(svc *corev1.Service, deployUID, notUID string) string {
	if string(svc.UID) == notUID {
		return "still the old service " + notUID
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s/%s/%d->%s", p.Name, p.Protocol, p.Port, p.TargetPort.String()))
	}
	refs := svc.OwnerReferences
	switch {
	case svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP == "":
		return fmt.Sprintf("type %s clusterIP %q", svc.Spec.Type, svc.Spec.ClusterIP)
	case len(svc.Spec.Selector) != 1 || svc.Spec.Selector["app"] != "web":
		return fmt.Sprintf("selector %v", svc.Spec.Selector)
	case strings.Join(ports, ",") != "http/TCP/8080->8080,metrics/TCP/9090->9090":
		return fmt.Sprintf("ports %v", ports)
	case svc.Labels["app.kubernetes.io/managed-by"] != "auto-service":
		return fmt.Sprintf("labels %v", svc.Labels)
	case len(refs) != 1 || refs[0].Kind != "Deployment" || refs[0].Name != "web" || string(refs[0].UID) != deployUID ||
		refs[0].Controller == nil || !*refs[0].Controller || refs[0].BlockOwnerDeletion == nil || !*refs[0].BlockOwnerDeletion:
		return fmt.Sprintf("ownerReferences %+v", refs)
	}
	return ""
}

func waitNoService(t *testing.T, cl *upCluster, name string) {
	t.Helper()
	eventually(t, 60*time.Second, name+" gone", func() string {
		_, errOut, err := cl.kubectlErr(t, "", "get", "service", name)
		if err == nil {
			return "still there"
		}
		if !strings.Contains(errOut, "NotFound") {
			return "kubectl: " + errOut
		}
		return ""
	})
}

// checkAutoServiceMetrics reads the controller's /metrics and expects
// successful reconciles counted under its name.
func checkAutoServiceMetrics(t *testing.T, addr string) {
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
	want := `controller_runtime_reconcile_total{controller="auto-service",result="success"}`
	if !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s", want)
	}
}
