package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
	"github.com/setpoint-dev/setpoint/testenv"
)

const (
	ns     = "webhooks-diff"
	config = "webhooks-diff"
)

// refKubeconfig is the reference's admin kubeconfig (TestMain).
var refKubeconfig string

// TestMain takes the reference for the whole run: one started now, or the
// running one SETPOINT_REFERENCE_KUBECONFIG names (refcluster.Use).
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kc, stop, err := refcluster.Use(ctx, refcluster.Options{EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat/webhooks: the reference:", err)
		return 1
	}
	defer stop()
	refKubeconfig = kc
	return m.Run()
}

func referenceSide(t *testing.T) *difftest.Side {
	ref, err := difftest.SideFromKubeconfig("reference", refKubeconfig)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	resp, err := ref.Do(context.Background(), difftest.Request{Path: "/readyz", Timeout: 5 * time.Second})
	if err != nil || resp.Code != 200 {
		t.Fatalf("reference not ready: %v", err)
	}
	return ref
}

// hookServer answers per path: hang, garbage, 500, allow, deny.
func hookServer(t *testing.T) *webhooktest.Server {
	release := make(chan struct{})
	review := func(w http.ResponseWriter, r *http.Request, resp *admissionv1.AdmissionResponse) {
		b, _ := io.ReadAll(r.Body)
		in := &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(b, in); err != nil || in.Request == nil {
			http.Error(w, "bad review", 400)
			return
		}
		resp.UID = in.Request.UID
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("garbage")) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(500)
		_, _ = w.Write([]byte("boom"))
	})
	mux.HandleFunc("/allow", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, &admissionv1.AdmissionResponse{Allowed: true})
	})
	mux.HandleFunc("/deny", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden, Message: "not here"}})
	})
	mux.HandleFunc("/deny-bare", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, &admissionv1.AdmissionResponse{})
	})
	mux.HandleFunc("/wrong-uid", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"nope","allowed":true}}`))
	})
	srv := webhooktest.Start(t, mux)
	t.Cleanup(func() { close(release) }) // before the server closes
	return srv
}

// mode is one way for a webhook to fail.
type mode struct {
	name, path, extra string
	wrongCA           bool
}

var modes = []mode{
	{name: "hang", path: "/hang", extra: `,"timeoutSeconds":1`},
	{name: "garbage", path: "/garbage"},
	{name: "status500", path: "/500"},
	{name: "cert", path: "/allow", wrongCA: true},
	{name: "uid", path: "/wrong-uid"},
	{name: "deny", path: "/deny"},
	{name: "denybare", path: "/deny-bare"},
}

func webhooks(srv *webhooktest.Server, wrong []byte) string {
	var hooks []string
	for _, m := range modes {
		ca := srv.CABundle
		if m.wrongCA {
			ca = wrong
		}
		caJSON, _ := json.Marshal(ca)
		for _, p := range []string{"Fail", "Ignore"} {
			hooks = append(hooks, fmt.Sprintf(`{"name":"%s-%s.webhooks-diff.example.com","clientConfig":{"url":%q,"caBundle":%s},
				"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
				"namespaceSelector":{"matchLabels":{"webhooks-diff":"yes"}},
				"objectSelector":{"matchLabels":{"webhooks-diff-route":"%s-%s"}},
				"failurePolicy":%q,"sideEffects":"NoneOnDryRun","admissionReviewVersions":["v1"]%s}`,
				m.name, strings.ToLower(p), srv.URL+m.path, caJSON, m.name, p, p, m.extra))
		}
	}
	return fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":%q},"webhooks":[%s]}`,
		config, strings.Join(hooks, ","))
}

func must(t *testing.T, s *difftest.Side, method, path, body string, codes ...int) *difftest.Response {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	resp, err := s.Do(context.Background(), difftest.Request{Method: method, Path: path, Body: b})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		if resp.Code == c {
			return resp
		}
	}
	t.Fatalf("%s: %s %s: %d %s", s.Name, method, path, resp.Code, resp.Body)
	return nil
}

func cm(name, route string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"webhooks-diff-route":%q}}}`, name, route)
}

const cms = "/api/v1/namespaces/" + ns + "/configmaps"

// TestFailureModes: for each failure mode and policy, both servers answer
// a create with the same Status; on Fail neither stores the object.
func TestFailureModes(t *testing.T) {
	ref := referenceSide(t)
	env := testenv.StartT(t, testenv.Options{Storage: testenv.StorageMemory})
	sp, err := difftest.SideFromKubeconfig("setpoint", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	srv := hookServer(t)
	wrong := webhooktest.NewCA(t)
	sides := []*difftest.Side{ref, sp}
	for _, s := range sides {
		must(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+config, "", 200, 404)
		must(t, s, "DELETE", "/api/v1/namespaces/"+ns, "", 200, 404)
	}
	for _, s := range sides {
		eventually(t, s.Name+": old namespace gone", func() bool {
			return must(t, s, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"webhooks-diff":"yes"}}}`, ns), 201, 409).Code == 201
		})
		t.Cleanup(func() {
			must(t, s, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+config, "", 200, 404)
			must(t, s, "DELETE", "/api/v1/namespaces/"+ns, "", 200, 404)
		})
		must(t, s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", webhooks(srv, wrong.PEM), 201)
		eventually(t, s.Name+": webhooks active", func() bool {
			return must(t, s, "POST", cms+"?dryRun=All", cm("probe", "status500-Fail"), 201, 500).Code == 500
		})
	}
	for _, m := range modes {
		for _, p := range []string{"Fail", "Ignore"} {
			name := strings.ToLower(m.name + "-" + p)
			pair, err := difftest.Both(context.Background(), ref, sp, difftest.Request{Method: "POST", Path: cms, Body: []byte(cm(name, m.name+"-"+p))})
			if err != nil {
				t.Fatal(err)
			}
			if pair.Ref.Code != pair.SP.Code {
				t.Errorf("%s %s: code reference %d, setpoint %d\nreference %s\nsetpoint  %s", m.name, p, pair.Ref.Code, pair.SP.Code, pair.Ref.Body, pair.SP.Body)
				continue
			}
			if pair.Ref.Code >= 400 {
				for _, c := range difftest.Diff(normalize(pair.Ref.Body), normalize(pair.SP.Body)) {
					t.Errorf("%s %s: %s: reference %v, setpoint %v", m.name, p, c.Path, c.Ref, c.SP)
				}
				t.Logf("%s %s: %d %s", m.name, p, pair.Ref.Code, pair.Ref.Body)
				for _, s := range sides {
					if code := must(t, s, "GET", cms+"/"+name, "", 200, 404).Code; code != 404 {
						t.Errorf("%s %s: %s stored the refused object", m.name, p, s.Name)
					}
				}
			}
		}
	}
}

// uidRE matches the review uid a message quotes (random on each side).
var uidRE = regexp.MustCompile(`response\.uid=\\"[0-9a-f-]{36}\\"`)

func normalize(body []byte) any {
	return difftest.DecodeJSON(uidRE.ReplaceAll(body, []byte(`response.uid=\"UID\"`)))
}

func eventually(t *testing.T, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
