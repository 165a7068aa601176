package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/rest"
)

const webService = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
`

const legacyRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
spec:
  replicas: 2
  selector: {app: legacy}
  template:
    metadata:
      labels: {app: legacy}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: legacy
        image: nginx
`

// endpointsWatch watches the Endpoints of a Service and records any
// address that is not a pod of the Service's selector: an invariant that
// holds at every moment, not only at convergence.
type endpointsWatch struct {
	mu      sync.Mutex
	strange []string
	events  int
}

func watchEndpoints(t *testing.T, ctx context.Context, c *rest.Client, name, app string) *endpointsWatch {
	t.Helper()
	eps := rest.For[*corev1.Endpoints, *corev1.EndpointsList](c, corev1.SchemeGroupVersion.WithResource("endpoints"), true).Namespace("default")
	stream, err := eps.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("watch endpoints: %v", err)
	}
	w := &endpointsWatch{}
	go func() {
		defer stream.Stop()
		for ev := range stream.ResultChan() {
			ep, ok := ev.Object.(*corev1.Endpoints)
			if !ok {
				continue
			}
			w.mu.Lock()
			w.events++
			for _, ss := range ep.Subsets {
				for _, a := range append(append([]corev1.EndpointAddress(nil), ss.Addresses...), ss.NotReadyAddresses...) {
					if a.TargetRef == nil || a.TargetRef.Kind != "Pod" || !strings.HasPrefix(a.TargetRef.Name, app+"-") {
						w.strange = append(w.strange, fmt.Sprintf("%s -> %+v", a.IP, a.TargetRef))
					}
				}
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// sortedIPs is the sorted IPs of pods.
func sortedIPs(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Status.PodIP)
	}
	sort.Strings(out)
	return out
}

// TestServiceEndpointsRCAndNamespaceDefaults: with real kubectl against
// `setpoint up`, a Deployment behind a Service gets Endpoints and
// EndpointSlices that follow its scaling; a ReplicationController lives
// (create, kubectl scale rc, delete with cascade); a new namespace gets
// the default ServiceAccount and kube-root-ca.crt; the kubernetes Service
// has its endpoints.
func TestServiceEndpointsRCAndNamespaceDefaults(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2)
	defer c.up.stop()
	rc := restClient(t, c.kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := watchEndpoints(t, ctx, rc, "web", "web")

	c.kubectl(t, deploymentManifest("web", 2, "nginx", "        ports: [{name: http, containerPort: 8080}]\n")+"---\n"+webService, "apply", "-f", "-")
	slicesOf := rest.For[*discoveryv1.EndpointSlice, *discoveryv1.EndpointSliceList](rc,
		discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), true).Namespace("default")
	converged := func(n int) func() string {
		return func() string {
			pods := runningPods(t, rc, "default", "app=web")
			if len(pods) != n {
				return fmt.Sprintf("%d running pods", len(pods))
			}
			want := sortedIPs(pods)
			got := strings.Fields(c.kubectl(t, "", "get", "endpoints", "web", "-o", "jsonpath={.subsets[*].addresses[*].ip}"))
			sort.Strings(got)
			if !slices.Equal(got, want) {
				return fmt.Sprintf("endpoints %v, want %v", got, want)
			}
			if ports := c.kubectl(t, "", "get", "endpoints", "web", "-o", "jsonpath={.subsets[*].ports[*].port}"); ports != "8080" {
				return "endpoint ports " + ports
			}
			list, err := slicesOf.List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
			if err != nil {
				return err.Error()
			}
			var sliceIPs []string
			for _, s := range list.Items {
				if s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
					return fmt.Sprintf("slice %s managed by %q", s.Name, s.Labels[discoveryv1.LabelManagedBy])
				}
				for _, e := range s.Endpoints {
					if e.Conditions.Ready == nil || !*e.Conditions.Ready {
						return fmt.Sprintf("slice endpoint %v not ready", e.Addresses)
					}
					sliceIPs = append(sliceIPs, e.Addresses...)
				}
			}
			sort.Strings(sliceIPs)
			if !slices.Equal(sliceIPs, want) {
				return fmt.Sprintf("slice endpoints %v, want %v", sliceIPs, want)
			}
			return ""
		}
	}
	eventually(t, 45*time.Second, "endpoints of 2 pods", converged(2))
	out := c.kubectl(t, "", "get", "endpoints,endpointslices", "-l", "kubernetes.io/service-name=web")
	out += c.kubectl(t, "", "get", "endpoints", "web")
	if !strings.Contains(out, "endpointslice.discovery.k8s.io/web-") || !strings.Contains(out, ":8080") {
		t.Fatalf("kubectl get endpoints,endpointslices:\n%s", out)
	}
	c.kubectl(t, "", "scale", "deployment/web", "--replicas=4")
	eventually(t, 45*time.Second, "endpoints of 4 pods", converged(4))
	c.kubectl(t, "", "scale", "deployment/web", "--replicas=1")
	eventually(t, 45*time.Second, "endpoints of 1 pod", converged(1))

	// The ReplicationController's life.
	c.kubectl(t, legacyRC, "apply", "-f", "-")
	eventually(t, 45*time.Second, "rc with 2 pods", func() string {
		if n := len(runningPods(t, rc, "default", "app=legacy")); n != 2 {
			return fmt.Sprintf("%d running pods", n)
		}
		return ""
	})
	for _, p := range runningPods(t, rc, "default", "app=legacy") {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "ReplicationController" || ref.Name != "legacy" {
			t.Fatalf("pod %s controller %+v", p.Name, ref)
		}
	}
	c.kubectl(t, "", "scale", "rc", "legacy", "--replicas=3")
	eventually(t, 45*time.Second, "rc with 3 ready pods", func() string {
		st := c.kubectl(t, "", "get", "rc", "legacy", "-o", "jsonpath={.status.replicas}/{.status.readyReplicas}/{.status.availableReplicas}")
		if st != "3/3/3" {
			return "status " + st
		}
		return ""
	})
	if got := c.kubectl(t, "", "get", "rc", "legacy", "--no-headers"); !strings.HasPrefix(strings.Join(strings.Fields(got), " "), "legacy 3 3 3") {
		t.Fatalf("kubectl get rc: %q", got)
	}
	if ev := c.kubectl(t, "", "get", "events", "--field-selector", "involvedObject.kind=ReplicationController,reason=SuccessfulCreate", "-o", "jsonpath={.items[*].message}"); !strings.Contains(ev, "Created pod: legacy-") {
		t.Fatalf("rc events: %q", ev)
	}
	c.kubectl(t, "", "delete", "rc", "legacy")
	eventually(t, 45*time.Second, "rc pods gone", func() string {
		list, err := podsOf(rc).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "app=legacy"})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 0 {
			return fmt.Sprintf("%d pods left", len(list.Items))
		}
		return ""
	})

	// A new namespace: default ServiceAccount and kube-root-ca.crt.
	c.kubectl(t, "", "create", "namespace", "fresh")
	ca := clusterCA(t, c.kubeconfig)
	eventually(t, 30*time.Second, "namespace defaults", func() string {
		if _, _, err := c.kubectlErr(t, "", "get", "serviceaccount", "default", "-n", "fresh"); err != nil {
			return "no default serviceaccount"
		}
		got, _, err := c.kubectlErr(t, "", "get", "configmap", "kube-root-ca.crt", "-n", "fresh", "-o", `jsonpath={.data.ca\.crt}`)
		if err != nil {
			return "no kube-root-ca.crt"
		}
		if got != ca {
			return "kube-root-ca.crt is not the cluster CA"
		}
		return ""
	})

	// kube-apiserver's own endpoints.
	if got := c.kubectl(t, "", "get", "endpointslice", "kubernetes", "-o", "jsonpath={.endpoints[*].addresses[*]}:{.ports[*].port}"); !strings.HasSuffix(got, ":"+strings.Split(c.addr, ":")[1]) {
		t.Fatalf("kubernetes endpointslice: %q", got)
	}

	cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.events == 0 || len(w.strange) > 0 {
		t.Fatalf("endpoints watch: %d events, foreign addresses %v", w.events, w.strange)
	}
}

// clusterCA is the CA the kubeconfig trusts, PEM.
func clusterCA(t *testing.T, kubeconfig string) string {
	t.Helper()
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				CAData string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || len(kc.Clusters) == 0 {
		t.Fatalf("kubeconfig: %v", err)
	}
	pem, err := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CAData)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem)
}
