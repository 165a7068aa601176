package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// BenchmarkCall measures one validating webhook call as the plugin makes
// it (the review encoded, posted over TLS on loopback, the answer decoded
// and checked) from 16 concurrent callers, against a webhook server that
// decodes the review and allows it. cpu-ns/op is the process's CPU per
// call, the server's included; allocs/op counts both sides too;
// connections is how many the server accepted in all.
func BenchmarkCall(b *testing.B) {
	srv := webhooktest.Start(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rv := &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(body, rv); err != nil || rv.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Response: &admissionv1.AdmissionResponse{UID: rv.Request.UID, Allowed: true}})
	}))
	c, err := newCaller()
	if err != nil {
		b.Fatal(err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	h := &hook{name: "noop.example.com", sideEffects: &none, timeout: 10 * time.Second, versions: []string{"v1"},
		client: webhookclient.ClientConfig{URL: srv.URL + "/validate", CABundle: srv.CABundle}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-1", Namespace: "default", UID: "6d3f1c2e-8a4b-4c1d-9e2f-0123456789ab",
		Labels: map[string]string{"app": "bench"}, CreationTimestamp: metav1.Now()}, Data: map[string]string{"key": "value", "other": "data"}}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	r := &request{a: &registry.Attributes{Operation: registry.Create, Object: cm,
		Request: registry.Request{Namespace: "default", Name: "cm-1", User: registry.UserInfo{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}}},
		gvr: gvr, gvk: gvk, reqGVR: gvr, reqGVK: gvk}
	if _, err := c.call(context.Background(), nil, h, r, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(8) // 16 callers on 2 CPUs
	cpu := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.call(context.Background(), nil, h, r, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	// Connections are kept alive and reused: at most one per caller.
	b.ReportMetric(float64(srv.Conns.Load()), "connections")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
