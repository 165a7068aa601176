package autoscaling_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	v1Path = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
	v2Path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
)

// call sends a JSON request and decodes the answer into out (when not
// nil), failing unless the status is want.
func call(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int, out any) {
	t.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	var code int
	var b []byte
	if r != nil {
		code, b, _ = s.Do(t, method, path, ctype, r)
	} else {
		code, b, _ = s.Do(t, method, path, "", nil)
	}
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
}

type event struct {
	Type   string
	Object map[string]any
}

// watch streams the events of a collection until the test ends.
func watch(t *testing.T, s *testserver.Server, path string) <-chan event {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path+"?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan event, 100)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				ch <- e
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan event, wantType, wantVersion string) event {
	t.Helper()
	select {
	case e := <-ch:
		if e.Type != wantType || e.Object["apiVersion"] != wantVersion {
			t.Fatalf("event %s %v, want %s %s", e.Type, e.Object["apiVersion"], wantType, wantVersion)
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s event", wantType)
	}
	return event{}
}

// TestV1IsAViewOfV2 writes autoscalers through autoscaling/v1 and
// autoscaling/v2 and reads and watches them through both: what v1 cannot
// express travels in Kubernetes' annotations and comes back whole.
func TestV1IsAViewOfV2(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	w1, w2 := watch(t, s, v1Path), watch(t, s, v2Path)

	// Created through v1: the CPU target and, in the annotation, a pods
	// metric.
	call(t, s, http.MethodPost, v1Path, "application/json", `{"metadata":{"name":"web","annotations":{"team":"a",
		"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"10\"}}]"}},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":50}}`, 201, nil)
	next(t, w1, "ADDED", "autoscaling/v1")
	next(t, w2, "ADDED", "autoscaling/v2")

	var h2 autoscalingv2.HorizontalPodAutoscaler
	call(t, s, http.MethodGet, v2Path+"/web", "", "", 200, &h2)
	if len(h2.Spec.Metrics) != 2 || h2.Spec.Metrics[0].Pods == nil || h2.Spec.Metrics[0].Pods.Metric.Name != "qps" ||
		h2.Spec.Metrics[1].Resource == nil || *h2.Spec.Metrics[1].Resource.Target.AverageUtilization != 50 {
		t.Fatalf("v2 metrics = %+v", h2.Spec.Metrics)
	}
	if len(h2.Annotations) != 1 || h2.Annotations["team"] != "a" || *h2.Spec.MinReplicas != 1 || h2.Generation != 1 {
		t.Fatalf("v2 annotations %v, minReplicas %d, generation %d", h2.Annotations, *h2.Spec.MinReplicas, h2.Generation)
	}

	// Changed through v2: a behavior and a status, which v1 shows in
	// annotations and in currentCPUUtilizationPercentage.
	call(t, s, http.MethodPatch, v2Path+"/web", "application/merge-patch+json",
		`{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":60}}}}`, 200, &h2)
	if h2.Generation != 2 || h2.Spec.Behavior.ScaleUp == nil || len(h2.Spec.Behavior.ScaleDown.Policies) != 1 {
		t.Fatalf("v2 behavior after patch: generation %d, %+v", h2.Generation, h2.Spec.Behavior)
	}
	next(t, w1, "MODIFIED", "autoscaling/v1")
	next(t, w2, "MODIFIED", "autoscaling/v2")
	call(t, s, http.MethodPatch, v2Path+"/web/status", "application/merge-patch+json", `{"status":{"currentReplicas":2,"desiredReplicas":3,
		"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":70}}}],
		"conditions":[{"type":"AbleToScale","status":"True","reason":"ReadyForNewScale","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, 200, nil)
	next(t, w1, "MODIFIED", "autoscaling/v1")
	next(t, w2, "MODIFIED", "autoscaling/v2")

	var h1 autoscalingv1.HorizontalPodAutoscaler
	call(t, s, http.MethodGet, v1Path+"/web", "", "", 200, &h1)
	if *h1.Spec.TargetCPUUtilizationPercentage != 50 || h1.Status.CurrentCPUUtilizationPercentage == nil ||
		*h1.Status.CurrentCPUUtilizationPercentage != 70 || h1.Status.DesiredReplicas != 3 {
		t.Fatalf("v1 spec %+v status %+v", h1.Spec, h1.Status)
	}
	for _, k := range []string{"autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/behavior",
		"autoscaling.alpha.kubernetes.io/current-metrics", "autoscaling.alpha.kubernetes.io/conditions"} {
		if h1.Annotations[k] == "" {
			t.Errorf("v1 annotation %s missing: %v", k, h1.Annotations)
		}
	}
	if b := h1.Annotations["autoscaling.alpha.kubernetes.io/behavior"]; !strings.Contains(b, `"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max"`) {
		t.Errorf("behavior annotation in Kubernetes' form: %s", b)
	}

	// Updated through v1 as read (a PUT of the v1 object): the status and
	// everything v1 cannot show survive; a change of maxReplicas moves the
	// generation.
	h1.Spec.MaxReplicas = 7
	body, err := json.Marshal(&h1)
	if err != nil {
		t.Fatal(err)
	}
	call(t, s, http.MethodPut, v1Path+"/web", "application/json", string(body), 200, nil)
	next(t, w1, "MODIFIED", "autoscaling/v1")
	next(t, w2, "MODIFIED", "autoscaling/v2")
	call(t, s, http.MethodGet, v2Path+"/web", "", "", 200, &h2)
	if h2.Spec.MaxReplicas != 7 || h2.Generation != 3 || len(h2.Spec.Metrics) != 2 || h2.Spec.Behavior == nil ||
		len(h2.Status.Conditions) != 1 || h2.Status.DesiredReplicas != 3 || len(h2.Annotations) != 1 {
		t.Fatalf("v2 after the v1 update: %+v", h2)
	}

	// A v1 change of the metrics annotation alone changes the v2 spec.
	call(t, s, http.MethodPatch, v1Path+"/web", "application/merge-patch+json",
		`{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/metrics":null}}}`, 200, nil)
	call(t, s, http.MethodGet, v2Path+"/web", "", "", 200, &h2)
	if len(h2.Spec.Metrics) != 1 || h2.Generation != 4 {
		t.Fatalf("v2 metrics after dropping the annotation: %+v, generation %d", h2.Spec.Metrics, h2.Generation)
	}
	next(t, w1, "MODIFIED", "autoscaling/v1")
	next(t, w2, "MODIFIED", "autoscaling/v2")

	call(t, s, http.MethodDelete, v1Path+"/web", "", "", 200, nil)
	next(t, w1, "DELETED", "autoscaling/v1")
	next(t, w2, "DELETED", "autoscaling/v2")
}

// TestDiscoveryPrefersV2 checks the group lists v2 then v1, v2 preferred,
// and both versions publish the storage hash of autoscaling/v2.
func TestDiscoveryPrefersV2(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	var g metav1.APIGroup
	call(t, s, http.MethodGet, "/apis/autoscaling", "", "", 200, &g)
	if len(g.Versions) != 2 || g.Versions[0].Version != "v2" || g.Versions[1].Version != "v1" || g.PreferredVersion.Version != "v2" {
		t.Fatalf("autoscaling group: %+v", g)
	}
	var l1, l2 metav1.APIResourceList
	call(t, s, http.MethodGet, "/apis/autoscaling/v1", "", "", 200, &l1)
	call(t, s, http.MethodGet, "/apis/autoscaling/v2", "", "", 200, &l2)
	// kube-apiserver v1.37.2 publishes qwQve8ut294= for both.
	for _, l := range []metav1.APIResourceList{l1, l2} {
		if len(l.APIResources) != 2 || l.APIResources[0].StorageVersionHash != "qwQve8ut294=" ||
			l.APIResources[1].Name != "horizontalpodautoscalers/status" {
			t.Errorf("%s: %+v", l.GroupVersion, l.APIResources)
		}
	}
}
