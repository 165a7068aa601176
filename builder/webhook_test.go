package builder_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/webhook"
)

type defaultFunc[T runtime.Object] func(context.Context, T) error

func (f defaultFunc[T]) Default(ctx context.Context, obj T) error { return f(ctx, obj) }

type labelDefaulter struct{}

func (labelDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["defaulted"] = "yes"
	return nil
}

type noEmptyData struct{}

func (noEmptyData) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	if len(cm.Data) == 0 {
		return nil, errors.New("data is required")
	}
	return nil, nil
}

func (v noEmptyData) ValidateUpdate(ctx context.Context, _, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	return v.ValidateCreate(ctx, cm)
}

func (noEmptyData) ValidateDelete(context.Context, *corev1.ConfigMap) (webhook.Warnings, error) {
	return nil, nil
}

// TestWebhookManagedBy: the builder registers a kind's webhooks at
// controller-runtime's paths on the manager's server, which the manager
// runs (without leading) and reports on /readyz.
func TestWebhookManagedBy(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ca, err := pki.EnsureCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	certPEM, keyPEM, err := ca.IssueServing("webhook", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600) != nil || os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600) != nil {
		t.Fatal("write certificate")
	}
	mgr := newManager(t, srv, manager.Options{HealthAddr: "127.0.0.1:0", LeaderElection: true, LeaderElectionID: "webhook-test",
		Webhook: webhook.Options{Addr: "127.0.0.1:0", CertDir: certDir}})

	if err := builder.WebhookManagedBy[*corev1.ConfigMap](mgr).Complete(); err == nil {
		t.Fatal("a builder without defaulter or validator completed")
	}
	type notInScheme struct{ corev1.ConfigMap }
	if err := builder.WebhookManagedBy[*notInScheme](mgr).WithDefaulter(defaultFunc[*notInScheme](func(context.Context, *notInScheme) error { return nil })).
		Complete(); err == nil || !strings.Contains(err.Error(), "kind of *builder_test.notInScheme") {
		t.Fatalf("a type the scheme lacks: %v", err)
	}
	if err := builder.WebhookManagedBy[*corev1.ConfigMap](mgr).WithDefaulter(labelDefaulter{}).WithValidator(noEmptyData{}).Complete(); err != nil {
		t.Fatal(err)
	}
	if err := builder.WebhookManagedBy[*corev1.ConfigMap](mgr).WithValidator(noEmptyData{}).Complete(); err == nil ||
		!strings.Contains(err.Error(), "/validate--v1-configmap registered twice") {
		t.Fatalf("second registration of a kind: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	select {
	case <-mgr.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("manager not ready")
	}
	ws, err := mgr.WebhookServer()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ws.Started():
	case <-time.After(10 * time.Second):
		t.Fatal("webhook server not listening")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	post := func(path, raw string) *admissionv1.AdmissionResponse {
		body, _ := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "1", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
				Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(raw)}}})
		resp, err := c.Post("https://"+ws.Addr()+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil || out.Response == nil {
			t.Fatalf("%s: %s %v", path, resp.Status, err)
		}
		return out.Response
	}
	if r := post("/mutate--v1-configmap", `{"metadata":{"name":"a"}}`); !r.Allowed ||
		string(r.Patch) != `[{"op":"add","path":"/metadata/labels","value":{"defaulted":"yes"}}]` {
		t.Fatalf("mutate: %+v", r)
	}
	if r := post("/validate--v1-configmap", `{"metadata":{"name":"a"}}`); r.Allowed || r.Result.Message != "data is required" {
		t.Fatalf("validate: %+v", r)
	}
	resp, err := http.Get("http://" + mgr.HealthAddr() + "/readyz/webhook")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz/webhook: %s", resp.Status)
	}
}
