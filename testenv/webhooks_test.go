package testenv_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/builder"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
	"github.com/setpoint-dev/setpoint/webhook"
)

// owner defaults the label "owner" to "nobody".
type owner struct{}

func (owner) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Labels["owner"] == "" {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["owner"] = "nobody"
	}
	return nil
}

// noSecrets refuses a ConfigMap with a "password" key, and warns about a
// "token" key.
type noSecrets struct{}

func (noSecrets) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	var warnings webhook.Warnings
	if _, ok := cm.Data["token"]; ok {
		warnings = append(warnings, "data.token: tokens belong in Secrets")
	}
	if v, ok := cm.Data["password"]; ok {
		return warnings, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind(), cm.Name,
			field.ErrorList{field.Invalid(field.NewPath("data").Key("password"), v, "passwords belong in Secrets")})
	}
	return warnings, nil
}

func (v noSecrets) ValidateUpdate(ctx context.Context, _, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	return v.ValidateCreate(ctx, cm)
}

func (noSecrets) ValidateDelete(context.Context, *corev1.ConfigMap) (webhook.Warnings, error) {
	return nil, nil
}

// warnings collects the Warning headers of the responses it passes on.
type warnings struct {
	next http.RoundTripper
	got  []string
}

func (w *warnings) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err == nil {
		w.got = append(w.got, resp.Header.Values("Warning")...)
	}
	return resp, err
}

// TestWebhooks: testenv installs the configurations of a manifest
// directory and of Go objects, pointed at the test's server with a
// certificate from its CA; once WaitForWebhooks returns, the API server
// calls them: the default is filled in, the refusal is the webhook's
// Status behind kube's prefix, and the store is unchanged.
func TestWebhooks(t *testing.T) {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	elsewhere := "https://webhook.example.invalid:8443/validate--v1-configmap"
	env := testenv.StartT(t, testenv.Options{Storage: testenv.StorageMemory, Webhooks: &testenv.WebhookOptions{
		Paths: []string{"testdata/webhook"},
		Validating: []*admissionregistrationv1.ValidatingWebhookConfiguration{{
			ObjectMeta: metav1.ObjectMeta{Name: "validating-webhook-configuration"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "vconfigmap.testenv.test",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &elsewhere},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}},
		}},
	}})
	w := env.Webhooks
	if w == nil || w.Host != "127.0.0.1" || w.Port == 0 || len(w.Mutating) != 1 || len(w.Validating) != 1 {
		t.Fatalf("webhook serving: %+v", w)
	}
	c := client(t, env)
	ctx := context.Background()
	vres := rest.For[*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfigurationList](
		c, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), false)
	mres := rest.For[*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfigurationList](
		c, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), false)
	m, err := mres.Get(ctx, "mutating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := vres.Get(ctx, "validating-webhook-configuration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []struct {
		got  admissionregistrationv1.WebhookClientConfig
		path string
	}{{m.Webhooks[0].ClientConfig, "/mutate--v1-configmap"}, {v.Webhooks[0].ClientConfig, "/validate--v1-configmap"}} {
		if cc.got.Service != nil || cc.got.URL == nil || *cc.got.URL != "https://"+w.Addr+cc.path || string(cc.got.CABundle) != string(w.CAData) {
			t.Fatalf("client config %+v, want https://%s%s with testenv's CA", cc.got, w.Addr, cc.path)
		}
	}

	mgr, err := manager.New(manager.Options{Config: env.Config, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler), Webhook: w.ServerOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if err := builder.WebhookManagedBy[*corev1.ConfigMap](mgr).WithDefaulter(owner{}).WithValidator(noSecrets{}).Complete(); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if err := env.WaitForWebhooks(short); err == nil || !strings.Contains(err.Error(), "does not serve TLS for 127.0.0.1") {
		t.Fatalf("wait with no server: %v", err)
	}
	testenv.RunManager(t, mgr, nil)
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := env.WaitForWebhooks(wait); err != nil {
		t.Fatal(err)
	}
	t.Logf("webhooks called %v after the manager ran", time.Since(start))
	if list, err := vres.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("the probes stay: %v %v", list, err)
	}
	if list, err := mres.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("the probes stay: %v %v", list, err)
	}

	ww := &warnings{}
	cfg := *env.Config
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { ww.next = rt; return ww }
	wc, err := rest.New(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseIdleConnections()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](wc, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	got, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"token": "t"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["owner"] != "nobody" {
		t.Fatalf("the default is not filled in: %v", got.Labels)
	}
	if len(ww.got) != 1 || ww.got[0] != `299 - "data.token: tokens belong in Secrets"` {
		t.Fatalf("warnings %q", ww.got)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "secretive"}, Data: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity || status.Status().Reason != metav1.StatusReasonInvalid ||
		status.Status().Message != `admission webhook "vconfigmap.testenv.test" denied the request: ConfigMap "secretive" is invalid: data[password]: Invalid value: "hunter2": passwords belong in Secrets` {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := cms.Get(ctx, "secretive", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused ConfigMap is stored: %v", err)
	}
}
