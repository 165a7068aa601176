package conformance

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// cmDefaulter is a controller-runtime Defaulter of ConfigMaps.
type cmDefaulter struct{}

func (cmDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["defaulted"] = "by-controller-runtime"
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["crwebhook/defaulted"] = "true"
	return nil
}

// cmValidator is a controller-runtime Validator of ConfigMaps: it refuses
// a "forbidden" key and records the operations it saw.
type cmValidator struct {
	mu  sync.Mutex
	ops []string
}

func (v *cmValidator) seen(op string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ops = append(v.ops, op)
}

func (v *cmValidator) check(cm *corev1.ConfigMap) (admission.Warnings, error) {
	if _, ok := cm.Data["forbidden"]; ok {
		return nil, errors.New("the key forbidden is not allowed")
	}
	if cm.Data["defaulted"] != "by-controller-runtime" {
		return nil, errors.New("not defaulted before validation")
	}
	return admission.Warnings{"validated by controller-runtime"}, nil
}

func (v *cmValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	v.seen("create")
	return v.check(cm)
}

func (v *cmValidator) ValidateUpdate(_ context.Context, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	v.seen("update")
	return v.check(cm)
}

func (v *cmValidator) ValidateDelete(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	v.seen("delete:" + cm.Name)
	if cm.Labels["keep"] == "true" {
		return nil, errors.New("this one stays")
	}
	return nil, nil
}

// warningsSeen collects the Warning headers client-go receives.
type warningsSeen struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningsSeen) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningsSeen) has(msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if m == msg {
			return true
		}
	}
	return false
}

// TestControllerRuntimeWebhookServer: controller-runtime's own webhook
// server (pkg/webhook) serves a defaulting and a validating webhook for
// ConfigMaps; setpoint calls them as kube-apiserver does: defaults
// applied before validation, refusals with controller-runtime's message,
// warnings returned to the client, deletes validated.
func TestControllerRuntimeWebhookServer(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Storage: testenv.StorageMemory})
	ca := webhooktest.NewCA(t)
	cert := ca.Serving(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}}})
	validator := &cmValidator{}
	srv.Register("/mutate-v1-configmap", admission.WithDefaulter[*corev1.ConfigMap](crScheme(), cmDefaulter{}))
	srv.Register("/validate-v1-configmap", admission.WithValidator[*corev1.ConfigMap](crScheme(), validator))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for srv.StartedChecker()(&http.Request{}) != nil {
		if time.Now().After(deadline) {
			t.Fatal("controller-runtime's webhook server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}

	cfg := clientConfig(t, env)
	warnings := &warningsSeen{}
	cfg.WarningHandler = warnings
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "crwebhook"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"crwebhook": "yes"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{"crwebhook": "yes"}}
	none := admissionregistrationv1.SideEffectClassNone
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "crwebhook"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mconfigmap.crwebhook.example.com", Rules: rules, NamespaceSelector: nsSel, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + "/mutate-v1-configmap"), CABundle: ca.PEM},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "crwebhook"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vconfigmap.crwebhook.example.com", Rules: rules, NamespaceSelector: nsSel, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + "/validate-v1-configmap"), CABundle: ca.PEM},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	// The plugins see new configurations as soon as their watch cache does.
	var cm *corev1.ConfigMap
	deadline = time.Now().Add(10 * time.Second)
	for {
		cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["defaulted"] != "" || time.Now().After(deadline) {
			break
		}
		if err := cms.Delete(ctx, "plain", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cm.Data["defaulted"] != "by-controller-runtime" || cm.Labels["crwebhook/defaulted"] != "true" {
		t.Fatalf("created object not defaulted by the webhook: %+v", cm)
	}
	if !warnings.has("validated by controller-runtime") {
		t.Errorf("warnings received: %q", warnings.msgs)
	}

	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{})
	want := `admission webhook "vconfigmap.crwebhook.example.com" denied the request: the key forbidden is not allowed`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("refused create: %v (forbidden %v), want %q", err, apierrors.IsForbidden(err), want)
	}
	if _, err := cms.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused object stored: %v", err)
	}

	cm.Data["forbidden"] = "now"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "the key forbidden is not allowed") {
		t.Errorf("refused update: %v", err)
	}
	delete(cm.Data, "forbidden")
	cm.Labels["keep"] = "true"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	err = cms.Delete(ctx, "plain", metav1.DeleteOptions{})
	if want := `admission webhook "vconfigmap.crwebhook.example.com" denied the request: this one stays`; err == nil || err.Error() != want {
		t.Errorf("refused delete: %v, want %q", err, want)
	}
	if _, err := cms.Get(ctx, "plain", metav1.GetOptions{}); err != nil {
		t.Errorf("object refused deletion is gone: %v", err)
	}
	validator.mu.Lock()
	ops := strings.Join(validator.ops, ",")
	validator.mu.Unlock()
	if !strings.Contains(ops, "create") || !strings.Contains(ops, "update") || !strings.Contains(ops, "delete:plain") {
		t.Errorf("operations the validator saw: %s", ops)
	}
}
