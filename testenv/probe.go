package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/webhook"
)

// ProbeLabel labels the ConfigMap WaitForWebhooks creates with dry run;
// its probe webhooks match only that label.
const ProbeLabel = "testenv.setpoint.dev/probe"

// WaitForWebhooks returns once the test's webhook server answers TLS at
// Webhooks.Addr with a certificate for Webhooks.Host from testenv's CA, and
// the API server calls the installed configurations: it installs a
// mutating and a validating probe webhook of its own after them, makes
// dry-run creates of a ConfigMap labelled ProbeLabel in "default" until
// both probes were called (the API server reads configurations in the
// order they were written, so the test's are in effect too), and removes
// the probes. Webhooks of the test that refuse that ConfigMap delay the
// mutating probe, not the others. Call it after starting the server,
// before the writes the webhooks must see; ctx bounds the wait.
func (e *Environment) WaitForWebhooks(ctx context.Context) error {
	w := e.Webhooks
	if w == nil {
		return errors.New("testenv: WaitForWebhooks without Options.Webhooks")
	}
	if err := w.waitServing(ctx); err != nil {
		return err
	}
	client, err := rest.New(e.Config)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer client.CloseIdleConnections()
	p, err := startProbe(w)
	if err != nil {
		return err
	}
	defer p.stop()
	remove, err := p.install(ctx, client)
	if err != nil {
		return errors.Join(err, remove())
	}
	return errors.Join(p.await(ctx, client), remove())
}

// waitServing waits until a TLS handshake with Addr verifies against the
// CA for Host.
func (w *WebhookServing) waitServing(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.CAData)
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: time.Second}, Config: &tls.Config{RootCAs: pool, ServerName: w.Host}}
	for {
		conn, err := d.DialContext(ctx, "tcp", w.Addr)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: the webhook server at %s does not serve TLS for %s: %w", w.Addr, w.Host, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe is a webhook server answering the two probe webhooks.
type probe struct {
	token                string
	srv                  *webhook.Server
	cancel               context.CancelFunc
	done                 chan error
	mutated, validated   atomic.Bool
	caData               []byte
	mutating, validating string
}

func startProbe(w *WebhookServing) (*probe, error) {
	ca, err := probeCertificate(w)
	if err != nil {
		return nil, err
	}
	p := &probe{token: rand.String(10), done: make(chan error, 1), caData: w.CAData}
	p.mutating, p.validating = "testenv-probe-"+p.token+"-m", "testenv-probe-"+p.token+"-v"
	p.srv = webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return ca, nil }})
	seen := func(flag *atomic.Bool) webhook.Handler {
		return webhook.HandlerFunc(func(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			flag.Store(true)
			return webhook.Allowed()
		})
	}
	if err := p.srv.Register("/mutate", webhook.Admission(seen(&p.mutated), nil)); err != nil {
		return nil, err
	}
	if err := p.srv.Register("/validate", webhook.Admission(seen(&p.validated), nil)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.done <- p.srv.Start(ctx) }()
	select {
	case <-p.srv.Started():
		return p, nil
	case err := <-p.done:
		cancel()
		return nil, fmt.Errorf("testenv: probe webhook server: %w", err)
	}
}

// probeCertificate returns a certificate for 127.0.0.1 from the CA that
// issued w's: the environment's.
func probeCertificate(w *WebhookServing) (*tls.Certificate, error) {
	if w.issuer == nil {
		return nil, errors.New("testenv: no CA for the probe")
	}
	certPEM, keyPEM, err := w.issuer.IssueServing("testenv-probe", []string{"127.0.0.1"})
	if err != nil {
		return nil, fmt.Errorf("testenv: probe certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("testenv: probe certificate: %w", err)
	}
	return &cert, nil
}

func (p *probe) stop() {
	p.cancel()
	<-p.done
}

// install creates the probe configurations; remove deletes those created.
func (p *probe) install(ctx context.Context, client *rest.Client) (remove func() error, err error) {
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	timeout := int32(5)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{ProbeLabel: p.token}}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		u := "https://" + p.srv.Addr() + path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: p.caData}
	}
	mres := rest.For[*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfigurationList](
		client, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), false)
	vres := rest.For[*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfigurationList](
		client, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), false)
	var created []func() error
	remove = func() error {
		var errs []error
		for _, del := range created {
			errs = append(errs, del())
		}
		return errors.Join(errs...)
	}
	bg := context.WithoutCancel(ctx)
	if _, err := mres.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: p.mutating},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mutating.probe.testenv.setpoint.dev", ClientConfig: cc("/mutate"),
			Rules: rules, ObjectSelector: selector, SideEffects: &none, FailurePolicy: &fail, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}); err != nil {
		return remove, fmt.Errorf("testenv: install the mutating probe: %w", err)
	}
	created = append(created, func() error { return mres.Delete(bg, p.mutating, metav1.DeleteOptions{}) })
	if _, err := vres.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: p.validating},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validating.probe.testenv.setpoint.dev", ClientConfig: cc("/validate"),
			Rules: rules, ObjectSelector: selector, SideEffects: &none, FailurePolicy: &fail, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}}},
	}, metav1.CreateOptions{}); err != nil {
		return remove, fmt.Errorf("testenv: install the validating probe: %w", err)
	}
	created = append(created, func() error { return vres.Delete(bg, p.validating, metav1.DeleteOptions{}) })
	return remove, nil
}

// await makes dry-run creates until both probes were called.
func (p *probe) await(ctx context.Context, client *rest.Client) error {
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](client, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	var last error
	for {
		_, last = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "testenv-webhook-probe",
			Labels: map[string]string{ProbeLabel: p.token}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if p.mutated.Load() && p.validated.Load() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: the API server did not call the probe webhooks (mutating called: %v, validating called: %v; last dry run: %v): %w",
				p.mutated.Load(), p.validated.Load(), last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
