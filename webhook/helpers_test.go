package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/webhook"
)

// certs makes a CA and writes a serving certificate for 127.0.0.1 into a
// new directory; it returns the directory and a pool trusting the CA.
func certs(t *testing.T) (string, *pki.CA) {
	t.Helper()
	ca, err := pki.EnsureCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeServing(t, ca, dir, "webhook")
	return dir, ca
}

func writeServing(t *testing.T, ca *pki.CA, dir, cn string) {
	t.Helper()
	certPEM, keyPEM, err := ca.IssueServing(cn, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	// Key first: the server reloads when either changes, and a pair read
	// half-written keeps the old certificate.
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serve starts s until the test ends and returns its https base URL and a
// client trusting ca.
func serve(t *testing.T, s *webhook.Server, ca *pki.CA) (string, *http.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	select {
	case <-s.Started():
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server not listening after 10s")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	t.Cleanup(tr.CloseIdleConnections)
	return "https://" + s.Addr(), &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

var configMapKind = metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// review posts an AdmissionReview (apiVersion v) for req to url and
// returns the decoded answer, failing the test on anything but a 200.
func review(t *testing.T, c *http.Client, url, v string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionReview {
	t.Helper()
	body, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: v, Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
	out := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	if out.APIVersion != v || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != req.UID {
		t.Fatalf("answer is not an AdmissionReview %s for UID %s: %+v", v, req.UID, out)
	}
	return out
}

func peerCertificate(t *testing.T, addr string, pool *x509.CertPool) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

func metav1GVK(group, version, kind string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: group, Version: version, Kind: kind}
}
