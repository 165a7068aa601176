package podautoscaler_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,
 "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}},
 "schema":{"openAPIV3Schema":{"type":"object","properties":{
  "spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},
  "status":{"type":"object","properties":{"replicas":{"type":"integer"},"selector":{"type":"string"}}}}}}}]}}`

// A custom resource with a scale subresource is a target like any other:
// found by discovery, read and written through its scale.
func TestCustomResourceTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	do := func(method, path, body string, want int) []byte {
		t.Helper()
		ct := "application/json"
		if method == http.MethodPatch {
			ct = "application/merge-patch+json"
		}
		code, out, _ := h.Server.Do(t, method, path, ct, strings.NewReader(body))
		if code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, out)
		}
		return out
	}
	do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCRD, http.StatusCreated)
	h.Eventually("widgets served", func() error {
		if code, out, _ := h.Server.Do(t, http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets", "", nil); code != 200 {
			return fmt.Errorf("%d %s", code, out)
		}
		return nil
	})
	// The widget's pods: a Deployment's, which the widget claims through
	// its status selector.
	h.createDeployment("w", 2, "100m")
	do(http.MethodPost, "/apis/example.com/v1/namespaces/default/widgets",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2}}`, http.StatusCreated)
	do(http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/w/status",
		`{"status":{"replicas":2,"selector":"app=w"}}`, http.StatusOK)
	a := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"},
			MaxReplicas:    6, Metrics: cpuTarget(50)}}
	if _, err := h.hpas.Create(h.ctx, a, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 100 % of the request against 50 %: twice the pods.
	h.stepUntil("widget scaled", 10, func() error {
		var w struct {
			Spec struct{ Replicas int } `json:"spec"`
		}
		code, out, _ := h.Server.Do(t, http.MethodGet, "/apis/example.com/v1/namespaces/default/widgets/w", "", nil)
		if err := json.Unmarshal(out, &w); err != nil || code != 200 {
			return fmt.Errorf("%d %s", code, out)
		}
		if w.Spec.Replicas != 4 {
			return fmt.Errorf("widget replicas %d", w.Spec.Replicas)
		}
		return nil
	})
	h.wantEvent("w", "SuccessfulRescale", "New size: 4; reason: cpu resource utilization (percentage of request) above target")
	// The status is written after the scale and the event; the clock
	// stands still from here, so no later sync overwrites it.
	h.Eventually("rescale condition", h.wantCondition("w", autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale",
		"the HPA controller was able to update the target scale to 4"))
}
