package webhookclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/webhookclient"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

func post(t *testing.T, c *webhookclient.Client, cfg webhookclient.ClientConfig, timeout time.Duration) (*webhookclient.Response, error) {
	t.Helper()
	return c.Post(context.Background(), cfg, webhookclient.Request{Body: []byte(`{}`), Timeout: timeout})
}

func TestPostURLReusesConnections(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := webhooktest.Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String()+" "+r.Header.Get("Content-Type")+" "+string(b)+" "+r.Proto)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	c := webhookclient.New(webhookclient.Options{})
	defer c.Close()
	cfg := webhookclient.ClientConfig{URL: srv.URL + "/validate/", CABundle: srv.CABundle}
	for i := 0; i < 5; i++ {
		resp, err := post(t, c, cfg, 10*time.Second)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if string(resp.Body) != `{"ok":true}` || resp.StatusCode != 200 {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, resp.Body)
		}
	}
	if want := "POST /validate?timeout=10s application/json {} HTTP/1.1"; seen[0] != want {
		t.Errorf("request = %q, want %q", seen[0], want)
	}
	if n := srv.Conns.Load(); n != 1 {
		t.Errorf("5 sequential calls opened %d connections, want 1", n)
	}
}

func TestPostFailures(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/text500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(500)
		_, _ = w.Write([]byte("boom\n"))
	})
	mux.HandleFunc("/json500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"not":"a status"}`))
	})
	mux.HandleFunc("/status403", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(403)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nope","reason":"Forbidden","code":403}`))
	})
	srv := webhooktest.Start(t, mux)
	other := webhooktest.NewCA(t)
	c := webhookclient.New(webhookclient.Options{})
	defer c.Close()
	host := strings.TrimPrefix(srv.URL, "https://")

	cases := []struct {
		name string
		cfg  webhookclient.ClientConfig
		want string
		code int32 // StatusError code, 0: not a StatusError
	}{
		{"hang", webhookclient.ClientConfig{URL: srv.URL + "/hang", CABundle: srv.CABundle},
			`Post "https://` + host + `/hang?timeout=200ms": context deadline exceeded`, 0},
		{"wrong CA", webhookclient.ClientConfig{URL: srv.URL + "/x", CABundle: other.PEM},
			`Post "https://` + host + `/x?timeout=200ms": tls: failed to verify certificate: x509: certificate signed by unknown authority`, 0},
		{"text 500", webhookclient.ClientConfig{URL: srv.URL + "/text500", CABundle: srv.CABundle},
			`an error on the server ("boom") has prevented the request from succeeding`, 500},
		{"json 500", webhookclient.ClientConfig{URL: srv.URL + "/json500", CABundle: srv.CABundle},
			`an error on the server ("unknown") has prevented the request from succeeding`, 500},
		{"status 403", webhookclient.ClientConfig{URL: srv.URL + "/status403", CABundle: srv.CABundle}, "nope", 403},
		{"bad CA bundle", webhookclient.ClientConfig{URL: srv.URL, CABundle: []byte("garbage")},
			"unable to load root certificates: unable to parse bytes as PEM block", 0},
		{"no url", webhookclient.ClientConfig{}, "webhook configuration must have either service or URL", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := post(t, c, tc.cfg, 200*time.Millisecond)
			if err == nil {
				t.Fatal("call succeeded")
			}
			if err.Error() != tc.want {
				t.Fatalf("err = %q, want %q", err, tc.want)
			}
			var se *apierrors.StatusError
			if errors.As(err, &se) != (tc.code != 0) || (se != nil && se.Status().Code != tc.code) {
				t.Fatalf("err %T %v: want StatusError code %d", err, err, tc.code)
			}
			var ce *webhookclient.ConfigError
			if strings.HasPrefix(tc.name, "bad") || tc.name == "no url" {
				if !errors.As(err, &ce) {
					t.Fatalf("err %T: want ConfigError", err)
				}
			}
		})
	}
}

func TestCallDecodes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u1","allowed":true}}`))
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("garbage")) })
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
	})
	srv := webhooktest.Start(t, mux)
	codec, err := webhookclient.NewCodec([]schema.GroupVersion{admissionv1.SchemeGroupVersion}, admissionv1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	c := webhookclient.New(webhookclient.Options{})
	defer c.Close()
	in := &admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: types.UID("u1")}}
	in.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	call := func(path string) (*admissionv1.AdmissionReview, error) {
		out := &admissionv1.AdmissionReview{}
		err := c.Call(context.Background(), webhookclient.FromAdmission(admissionregistrationv1.WebhookClientConfig{
			URL: ptr(srv.URL + path), CABundle: srv.CABundle,
		}), webhookclient.Request{Timeout: time.Second}, codec, in, out)
		return out, err
	}
	out, err := call("/ok")
	if err != nil || out.Response == nil || !out.Response.Allowed || out.Response.UID != "u1" {
		t.Fatalf("ok: %v %+v", err, out)
	}
	if _, err := call("/garbage"); err == nil || !strings.HasPrefix(err.Error(), "couldn't get version/kind; json parse error: ") {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := call("/empty"); err == nil || err.Error() != "0-length response with status code: 200 and content type: application/json" {
		t.Fatalf("empty: %v", err)
	}
}

func TestURL(t *testing.T) {
	got, err := webhookclient.URL(webhookclient.ClientConfig{Service: &webhookclient.ServiceReference{Namespace: "ns", Name: "hook", Path: "v"}}, 10*time.Second)
	if want := "https://hook.ns.svc:443/v?timeout=10s"; err != nil || got != want {
		t.Errorf("URL = %q %v, want %q", got, err, want)
	}
	got, err = webhookclient.URL(webhookclient.ClientConfig{URL: "https://h:8443"}, 0)
	if want := "https://h:8443/"; err != nil || got != want {
		t.Errorf("URL = %q %v, want %q", got, err, want)
	}
	_, err = webhookclient.URL(webhookclient.ClientConfig{URL: "https://h:x/%"}, 0)
	if err == nil || !strings.HasPrefix(err.Error(), "Unparsable URL: ") {
		t.Errorf("bad URL err = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

var _ = fmt.Sprint
