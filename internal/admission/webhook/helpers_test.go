package webhook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// hookServer is a real HTTPS webhook server: each path answers as its
// handler says; every review received is kept.
type hookServer struct {
	*webhooktest.Server
	mu      sync.Mutex
	reviews map[string][]*admissionv1.AdmissionReview
	release chan struct{}
}

type answer func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

func startHooks(t testing.TB, answers map[string]answer) *hookServer {
	hs := &hookServer{reviews: map[string][]*admissionv1.AdmissionReview{}, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hs.release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("garbage")) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(500)
		_, _ = w.Write([]byte("boom"))
	})
	for path, ans := range answers {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			rv := &admissionv1.AdmissionReview{}
			if err := json.Unmarshal(b, rv); err != nil || rv.Request == nil {
				http.Error(w, "bad review", 400)
				return
			}
			hs.mu.Lock()
			hs.reviews[path] = append(hs.reviews[path], rv)
			hs.mu.Unlock()
			resp := ans(rv.Request)
			resp.UID = rv.Request.UID
			out := &admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
		})
	}
	hs.Server = webhooktest.Start(t, mux)
	t.Cleanup(func() { close(hs.release) })
	return hs
}

func (hs *hookServer) got(path string) []*admissionv1.AdmissionReview {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]*admissionv1.AdmissionReview(nil), hs.reviews[path]...)
}

func allow(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// webhookJSON is one webhook of a configuration, scoped to the test's
// namespace by a namespaceSelector on its label.
func webhookJSON(name, url string, ca []byte, extra string) string {
	caJSON, _ := json.Marshal(ca)
	return fmt.Sprintf(`{"name":%q,"clientConfig":{"url":%q,"caBundle":%s},
		"rules":[{"operations":["CREATE","UPDATE","DELETE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
		"namespaceSelector":{"matchLabels":{"webhook-test":"yes"}},
		"sideEffects":"None","admissionReviewVersions":["v1"]%s}`, name, url, caJSON, extra)
}

func do(t *testing.T, s *testserver.Server, method, path, body string) (int, string, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	code, b, h := s.Do(t, method, path, "application/json", r)
	return code, string(b), h
}

func mustDo(t *testing.T, s *testserver.Server, method, path, body string, want int) string {
	t.Helper()
	code, b, _ := do(t, s, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

// register creates a webhook configuration and waits until the plugins
// see it: a dry-run create in the namespace reaches its first webhook.
func register(t *testing.T, s *testserver.Server, kind, name string, hooks ...string) {
	t.Helper()
	res := strings.ToLower(kind) + "s"
	body := fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":%q,"metadata":{"name":%q},"webhooks":[%s]}`,
		kind, name, strings.Join(hooks, ","))
	mustDo(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/"+res, body, 201)
	t.Cleanup(func() { s.Do(t, "DELETE", "/apis/admissionregistration.k8s.io/v1/"+res+"/"+name, "", nil) })
}

// namespace creates ns labelled for the test's webhooks.
func namespace(t *testing.T, s *testserver.Server, ns string) {
	t.Helper()
	mustDo(t, s, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"webhook-test":"yes"}}}`, ns), 201)
}

func configMap(name string, labels string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{%s}},"data":{"k":"v"}}`, name, labels)
}

// eventually retries fn until it reports true or 10 s have passed (the
// plugins read configurations from the watch cache, which follows the
// store by a moment).
func eventually(t *testing.T, what string, fn func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 10*time.Second, 50*time.Millisecond, what, testwait.Bool(fn))
}

func status(t *testing.T, body string) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("not a Status: %s", body)
	}
	return st
}

func jsonDecode(r *http.Request, into any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
