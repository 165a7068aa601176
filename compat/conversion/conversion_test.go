package conversion

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/internal/crconversion/crconversiontest"
)

const (
	group     = "conversion.setpoint.test"
	namespace = "conversion-compat"
	crdPath   = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
)

func widgets(version, name string) string {
	p := fmt.Sprintf("/apis/%s/%s/namespaces/%s/widgets", group, version, namespace)
	if name != "" {
		p += "/" + name
	}
	return p
}

// normalization: besides difftest's rules (uids, resourceVersions,
// times), the revisions named in corrupt-object messages.
var normalization = difftest.Normalization{Replace: []difftest.Replacement{
	{Pattern: regexp.MustCompile(`revision=\d+`), With: "revision=<rv>"},
}}

// send sends r to both sides and fails on a transport error.
func send(t *testing.T, r difftest.Request) difftest.Pair {
	t.Helper()
	p, err := difftest.Both(context.Background(), ref, sp, r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// compare sends r to both sides and reports every difference of their
// answers: the status code, then the normalized bodies.
func compare(t *testing.T, what string, r difftest.Request) difftest.Pair {
	t.Helper()
	p := send(t, r)
	if p.Ref.Code != p.SP.Code {
		t.Errorf("%s: reference %d %s\nsetpoint %d %s", what, p.Ref.Code, p.Ref.Body, p.SP.Code, p.SP.Body)
		return p
	}
	a := difftest.Normalize(p.Ref.JSON(), normalization)
	b := difftest.Normalize(p.SP.JSON(), normalization)
	for _, c := range difftest.Diff(a, b) {
		t.Errorf("%s: %s: reference %s, setpoint %s", what, c.Path, difftest.Render(c.Ref, 400), difftest.Render(c.SP, 400))
	}
	return p
}

func post(path, body string) difftest.Request {
	return difftest.Request{Method: http.MethodPost, Path: path, Body: []byte(body), Header: map[string]string{"Content-Type": "application/json"}}
}

func patch(path, body string) difftest.Request {
	return difftest.Request{Method: http.MethodPatch, Path: path, Body: []byte(body), Header: map[string]string{"Content-Type": "application/merge-patch+json"}}
}

// setup creates the namespace and the CRD on both sides (deleted when the
// test ends) and waits until both serve both versions.
func setup(t *testing.T, w *crconversiontest.Webhook) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []*difftest.Side{ref, sp} {
		t.Cleanup(func() {
			for _, p := range []string{crdPath + "/widgets." + group, "/api/v1/namespaces/" + namespace} {
				resp, err := s.Do(ctx, difftest.Request{Method: http.MethodDelete, Path: p})
				if err != nil || (resp.Code != http.StatusOK && resp.Code != http.StatusNotFound) {
					t.Errorf("%s: cleanup %s: %v %v", s.Name, p, err, resp)
				}
			}
		})
	}
	for _, r := range []difftest.Request{post("/api/v1/namespaces", `{"metadata":{"name":"`+namespace+`"}}`), post(crdPath, string(w.CRD(group, "v1")))} {
		p := send(t, r)
		if p.Ref.Code != http.StatusCreated || p.SP.Code != http.StatusCreated {
			t.Fatalf("%s %s: reference %d %s, setpoint %d %s", r.Method, r.Path, p.Ref.Code, p.Ref.Body, p.SP.Code, p.SP.Body)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range []*difftest.Side{ref, sp} {
		for _, v := range []string{"v1", "v2"} {
			for {
				resp, err := s.Do(ctx, difftest.Request{Path: widgets(v, "")})
				if err == nil && resp.Code == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s does not serve widgets %s", s.Name, v)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// TestConversionWebhookDifferential: reads, lists and writes at the
// version that is not stored, through a good webhook, then the answers
// while the webhook fails (500, garbage, a wrong uid), compared with
// kube-apiserver's; nothing is stored through a failing webhook.
func TestConversionWebhookDifferential(t *testing.T) {
	w := crconversiontest.Start(t)
	setup(t, w)

	compare(t, "create at the storage version", post(widgets("v1", ""),
		`{"apiVersion":"conversion.setpoint.test/v1","kind":"Widget","metadata":{"name":"a","labels":{"app":"x"}},"spec":{"hostPort":"h:80","replicas":1}}`))
	compare(t, "get at v2", difftest.Request{Path: widgets("v2", "a")})
	compare(t, "create at v2", post(widgets("v2", ""),
		`{"apiVersion":"conversion.setpoint.test/v2","kind":"Widget","metadata":{"name":"b"},"spec":{"host":"x","port":81,"replicas":1}}`))
	compare(t, "get at v1 of a v2 create", difftest.Request{Path: widgets("v1", "b")})
	compare(t, "merge patch at v2", patch(widgets("v2", "b"), `{"spec":{"port":82}}`))
	compare(t, "status patch at v2", patch(widgets("v2", "b")+"/status", `{"status":{"replicas":2}}`))
	compare(t, "scale at v2", difftest.Request{Path: widgets("v2", "b") + "/scale"})
	compare(t, "list at v2", difftest.Request{Path: widgets("v2", "")})
	compare(t, "list at v1", difftest.Request{Path: widgets("v1", "")})

	for _, mode := range []string{crconversiontest.Mode500, crconversiontest.ModeGarbage, crconversiontest.ModeWrongUID} {
		w.SetMode(mode)
		compare(t, mode+": get at v2", difftest.Request{Path: widgets("v2", "a")})
		compare(t, mode+": create at v2", post(widgets("v2", ""),
			`{"apiVersion":"conversion.setpoint.test/v2","kind":"Widget","metadata":{"name":"c"},"spec":{"host":"y","port":1}}`))
		compare(t, mode+": get at the storage version", difftest.Request{Path: widgets("v1", "a")})
	}
	w.SetMode(crconversiontest.ModeGood)
	p := compare(t, "nothing was stored through the failing webhook", difftest.Request{Path: widgets("v1", "c")})
	if p.Ref.Code != http.StatusNotFound || p.SP.Code != http.StatusNotFound {
		t.Errorf("c was stored: reference %d, setpoint %d %s", p.Ref.Code, p.SP.Code, p.SP.Body)
	}
}
