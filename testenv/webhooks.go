package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/webhook"
)

// WebhookOptions install admission webhook configurations that call a
// webhook server the test runs on this machine, as envtest's
// WebhookInstallOptions do. Every webhook of the configurations is
// pointed at https://Host:Port plus its path (its service.path, or the
// path of its url), with testenv's CA as caBundle.
type WebhookOptions struct {
	// Paths are manifest files (YAML, several documents each, or JSON) or
	// directories of them (*.yaml, *.yml, *.json, not descending); their
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration
	// documents are installed and other kinds are skipped, so
	// kubebuilder's config/webhook directory can be given as is.
	Paths []string
	// Mutating and Validating are installed too (copies are changed).
	Mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	// Host is where the test's webhook server listens (default
	// 127.0.0.1); the serving certificate is issued for it.
	Host string
	// Port is its port (default a free port, chosen at Start).
	Port int
	// CertDir receives the serving certificate and key, tls.crt and
	// tls.key (default DataDir/webhook).
	CertDir string
}

// WebhookServing tells the test where to serve its webhooks.
type WebhookServing struct {
	// Host, Port and Addr (host:port) are where the configurations point.
	Host string
	Port int
	Addr string
	// CertDir holds tls.crt and tls.key, a certificate for Host issued by
	// testenv's CA; Certificate is the same pair, loaded.
	CertDir     string
	Certificate tls.Certificate
	// CAData is testenv's CA (PEM), the configurations' caBundle.
	CAData []byte
	// Mutating and Validating are the names of the configurations
	// installed.
	Mutating, Validating []string

	issuer *pki.CA
}

// ServerOptions returns webhook server options that serve where the
// configurations point, with the issued certificate:
//
//	mgr, _ := manager.New(manager.Options{Config: env.Config, Webhook: env.Webhooks.ServerOptions()})
func (w *WebhookServing) ServerOptions() webhook.Options {
	return webhook.Options{Addr: w.Addr, CertDir: w.CertDir}
}

// setupWebhooks issues the serving certificate and installs the
// configurations of opts.
func (e *Environment) setupWebhooks(ctx context.Context) error {
	o := *e.opts.Webhooks
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(e.opts.DataDir, "webhook")
	}
	if o.Port == 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(o.Host, "0"))
		if err != nil {
			return fmt.Errorf("testenv: pick a webhook port: %w", err)
		}
		o.Port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	w := &WebhookServing{Host: o.Host, Port: o.Port, Addr: net.JoinHostPort(o.Host, strconv.Itoa(o.Port)), CertDir: o.CertDir}
	if err := w.issue(e.opts.DataDir); err != nil {
		return err
	}
	mutating, validating, err := readWebhookManifests(o.Paths)
	if err != nil {
		return err
	}
	for _, c := range o.Mutating {
		mutating = append(mutating, c.DeepCopy())
	}
	for _, c := range o.Validating {
		validating = append(validating, c.DeepCopy())
	}
	client, err := rest.New(e.Config)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	defer client.CloseIdleConnections()
	mres := rest.For[*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.MutatingWebhookConfigurationList](
		client, admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), false)
	for _, c := range mutating {
		for i := range c.Webhooks {
			if err := w.point(&c.Webhooks[i].ClientConfig); err != nil {
				return fmt.Errorf("testenv: MutatingWebhookConfiguration %s: webhook %s: %w", c.Name, c.Webhooks[i].Name, err)
			}
		}
		if err := upsert(ctx, mres, c); err != nil {
			return fmt.Errorf("testenv: install MutatingWebhookConfiguration %s: %w", c.Name, err)
		}
		w.Mutating = append(w.Mutating, c.Name)
	}
	vres := rest.For[*admissionregistrationv1.ValidatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfigurationList](
		client, admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), false)
	for _, c := range validating {
		for i := range c.Webhooks {
			if err := w.point(&c.Webhooks[i].ClientConfig); err != nil {
				return fmt.Errorf("testenv: ValidatingWebhookConfiguration %s: webhook %s: %w", c.Name, c.Webhooks[i].Name, err)
			}
		}
		if err := upsert(ctx, vres, c); err != nil {
			return fmt.Errorf("testenv: install ValidatingWebhookConfiguration %s: %w", c.Name, err)
		}
		w.Validating = append(w.Validating, c.Name)
	}
	e.Webhooks = w
	return nil
}

// issue writes a serving certificate for w.Host, signed by the CA of the
// environment in dataDir, into w.CertDir.
func (w *WebhookServing) issue(dataDir string) error {
	ca, err := pki.LoadCA(dataDir)
	if err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	certPEM, keyPEM, err := ca.IssueServing("testenv-webhook", []string{w.Host})
	if err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	if err := os.MkdirAll(w.CertDir, 0o700); err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(w.CertDir, webhook.DefaultKeyName), keyPEM, 0o600); err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(w.CertDir, webhook.DefaultCertName), certPEM, 0o600); err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	if w.Certificate, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("testenv: webhook certificate: %w", err)
	}
	w.CAData, w.issuer = ca.CertPEM, ca
	return nil
}

// point makes cc call the test's server: the URL is https://Addr plus the
// service's path or the url's path, and the caBundle testenv's CA.
func (w *WebhookServing) point(cc *admissionregistrationv1.WebhookClientConfig) error {
	path := ""
	switch {
	case cc.Service != nil:
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return fmt.Errorf("url %q: %w", *cc.URL, err)
		}
		path = u.EscapedPath()
	}
	u := (&url.URL{Scheme: "https", Host: w.Addr}).String() + path
	cc.URL, cc.Service, cc.CABundle = &u, nil, w.CAData
	return nil
}

// upsert creates obj, or replaces the object of its name (an environment
// started again on its data directory finds its configurations).
func upsert[T interface {
	runtime.Object
	metav1.Object
}, L runtime.Object](ctx context.Context, res *rest.Resource[T, L], obj T) error {
	_, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := res.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	_, err = res.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}
