package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/webhook"
)

// greetingDefaults fills data.greeting and a label; it refuses an object
// named "refuse".
type greetingDefaults struct{}

func (greetingDefaults) Default(ctx context.Context, cm *corev1.ConfigMap) error {
	if webhook.RequestFrom(ctx) == nil {
		return errors.New("no request in the context")
	}
	if cm.Name == "refuse" {
		return apierrors.NewForbidden(corev1.Resource("configmaps"), cm.Name, errors.New("not this one"))
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if cm.Data["greeting"] == "" {
		cm.Data["greeting"] = "Hello"
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["demo/defaulted"] = "true"
	delete(cm.Annotations, "demo/remove-me")
	return nil
}

// TestDefaultingPatch: the patch applied to the object sent adds the
// defaults, removes what Default removed, keeps fields ConfigMap does not
// know, and adds none of the decoding artefacts (creationTimestamp: null).
func TestDefaultingPatch(t *testing.T) {
	dir, ca := certs(t)
	s := webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", CertDir: dir})
	scheme := newScheme(t)
	gvk, err := webhook.KindOf[*corev1.ConfigMap](scheme)
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.Defaulting[*corev1.ConfigMap](scheme, greetingDefaults{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(webhook.MutatePath(gvk), webhook.Admission(h, nil)); err != nil {
		t.Fatal(err)
	}
	if got := webhook.MutatePath(gvk); got != "/mutate--v1-configmap" {
		t.Fatalf("path %s", got)
	}
	base, c := serve(t, s, ca)

	raw := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","annotations":{"keep":"x","demo/remove-me":"y"}},` +
		`"data":{"other":"1"},"futureField":{"a/b~c":[1,2]}}`
	for _, v := range []string{"admission.k8s.io/v1", "admission.k8s.io/v1beta1"} {
		out := review(t, c, base+"/mutate--v1-configmap", v, &admissionv1.AdmissionRequest{
			UID: "uid-1", Kind: configMapKind, Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(raw)}})
		resp := out.Response
		if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
			t.Fatalf("%s: response %+v", v, resp)
		}
		if strings.Contains(string(resp.Patch), "creationTimestamp") || strings.Contains(string(resp.Patch), "futureField") {
			t.Fatalf("%s: the patch touches what Default did not: %s", v, resp.Patch)
		}
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Apply([]byte(raw))
		if err != nil {
			t.Fatalf("patch %s does not apply: %v", resp.Patch, err)
		}
		want := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","annotations":{"keep":"x"},"labels":{"demo/defaulted":"true"}},` +
			`"data":{"other":"1","greeting":"Hello"},"futureField":{"a/b~c":[1,2]}}`
		if !jsonpatch.Equal(got, []byte(want)) {
			t.Fatalf("%s: patched object\n%s\nwant\n%s\n(patch %s)", v, got, want, resp.Patch)
		}
	}

	// Already defaulted: no patch at all.
	done := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","labels":{"demo/defaulted":"true"}},"data":{"greeting":"Hi"}}`
	out := review(t, c, base+"/mutate--v1-configmap", "admission.k8s.io/v1", &admissionv1.AdmissionRequest{
		UID: "uid-2", Kind: configMapKind, Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: []byte(done)}})
	if !out.Response.Allowed || out.Response.Patch != nil || out.Response.PatchType != nil {
		t.Fatalf("nothing to default, got %+v", out.Response)
	}

	// A Defaulter's status error refuses with its Status.
	refuse := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"refuse"}}`
	out = review(t, c, base+"/mutate--v1-configmap", "admission.k8s.io/v1", &admissionv1.AdmissionRequest{
		UID: "uid-3", Kind: configMapKind, Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(refuse)}})
	if r := out.Response; r.Allowed || r.Result.Code != 403 || r.Result.Reason != "Forbidden" ||
		r.Result.Message != `configmaps "refuse" is forbidden: not this one` || r.Patch != nil {
		t.Fatalf("refusal: %+v %+v", r, r.Result)
	}
}

// rules refuses empty data values (as field errors), a create named
// "plain" (a plain error), an update that changes data.id, a delete of an
// object labelled keep=true, and warns about a "TODO" value.
type rules struct{}

func (rules) check(cm *corev1.ConfigMap) (webhook.Warnings, error) {
	var warnings webhook.Warnings
	var errs field.ErrorList
	for k, v := range cm.Data {
		if v == "" {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), v, "must not be empty"))
		}
		if v == "TODO" {
			warnings = append(warnings, fmt.Sprintf("data.%s is TODO", k))
		}
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind(), cm.Name, errs)
	}
	return warnings, nil
}

func (r rules) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	if cm.Name == "plain" {
		return nil, errors.New("plain objects are not welcome")
	}
	return r.check(cm)
}

func (r rules) ValidateUpdate(_ context.Context, old, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	if old.Data["id"] != cm.Data["id"] {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind(), cm.Name,
			field.ErrorList{field.Invalid(field.NewPath("data").Key("id"), cm.Data["id"], "field is immutable")})
	}
	return r.check(cm)
}

func (rules) ValidateDelete(_ context.Context, cm *corev1.ConfigMap) (webhook.Warnings, error) {
	if cm.Labels["keep"] == "true" {
		return webhook.Warnings{"kept"}, errors.New("this ConfigMap is kept")
	}
	return nil, nil
}

// TestValidatingAnswers: every operation reaches the right method with the
// right objects; refusals carry the Status the client sees; warnings pass.
func TestValidatingAnswers(t *testing.T) {
	dir, ca := certs(t)
	s := webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", CertDir: dir})
	h, err := webhook.Validating[*corev1.ConfigMap](newScheme(t), rules{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("/validate--v1-configmap", webhook.Admission(h, nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("/validate--v1-configmap", webhook.Admission(h, nil)); err == nil {
		t.Fatal("a path registered twice was accepted")
	}
	base, c := serve(t, s, ca)
	url := base + "/validate--v1-configmap"
	obj := func(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
	call := func(op admissionv1.Operation, o, old string) *admissionv1.AdmissionResponse {
		req := &admissionv1.AdmissionRequest{UID: "u", Kind: configMapKind, Operation: op}
		if o != "" {
			req.Object = obj(o)
		}
		if old != "" {
			req.OldObject = obj(old)
		}
		return review(t, c, url, "admission.k8s.io/v1", req).Response
	}

	if r := call(admissionv1.Create, `{"metadata":{"name":"ok"},"data":{"a":"TODO"}}`, ""); !r.Allowed || len(r.Warnings) != 1 || r.Warnings[0] != "data.a is TODO" {
		t.Fatalf("allowed create with a warning: %+v", r)
	}
	r := call(admissionv1.Create, `{"metadata":{"name":"bad"},"data":{"a":"","b":"TODO"}}`, "")
	if r.Allowed || r.Result.Code != 422 || r.Result.Reason != "Invalid" ||
		r.Result.Message != `ConfigMap "bad" is invalid: data[a]: Invalid value: "": must not be empty` ||
		r.Result.Details == nil || len(r.Result.Details.Causes) != 1 || r.Result.Details.Causes[0].Field != "data[a]" ||
		len(r.Warnings) != 1 {
		t.Fatalf("invalid create: %+v %+v", r, r.Result)
	}
	if r := call(admissionv1.Create, `{"metadata":{"name":"plain"}}`, ""); r.Allowed || r.Result.Code != 403 ||
		r.Result.Reason != "Forbidden" || r.Result.Message != "plain objects are not welcome" || r.Result.Status != "Failure" {
		t.Fatalf("plain error: %+v %+v", r, r.Result)
	}
	if r := call(admissionv1.Update, `{"metadata":{"name":"u"},"data":{"id":"2"}}`, `{"metadata":{"name":"u"},"data":{"id":"1"}}`); r.Allowed ||
		r.Result.Message != `ConfigMap "u" is invalid: data[id]: Invalid value: "2": field is immutable` {
		t.Fatalf("immutable update: %+v %+v", r, r.Result)
	}
	if r := call(admissionv1.Update, `{"metadata":{"name":"u"},"data":{"id":"1","x":"y"}}`, `{"metadata":{"name":"u"},"data":{"id":"1"}}`); !r.Allowed {
		t.Fatalf("valid update refused: %+v", r.Result)
	}
	if r := call(admissionv1.Delete, "", `{"metadata":{"name":"d","labels":{"keep":"true"}}}`); r.Allowed ||
		r.Result.Message != "this ConfigMap is kept" || len(r.Warnings) != 1 {
		t.Fatalf("delete of a kept object: %+v %+v", r, r.Result)
	}
	if r := call(admissionv1.Delete, "", `{"metadata":{"name":"d"}}`); !r.Allowed {
		t.Fatalf("delete refused: %+v", r.Result)
	}
	if r := call(admissionv1.Connect, "", ""); !r.Allowed {
		t.Fatalf("connect refused: %+v", r.Result)
	}
	// A request for another kind is the webhook's error, not a verdict.
	req := &admissionv1.AdmissionRequest{UID: "u", Kind: metav1GVK("", "v1", "Secret"), Operation: admissionv1.Create, Object: obj(`{}`)}
	if r := review(t, c, url, "admission.k8s.io/v1", req).Response; r.Allowed || r.Result.Code != 400 ||
		r.Result.Message != "the webhook of /v1, Kind=ConfigMap was sent a /v1, Kind=Secret" {
		t.Fatalf("wrong kind: %+v", r.Result)
	}
	// An object the type cannot read is a 400.
	if r := call(admissionv1.Create, `{"metadata":{"name":7}}`, ""); r.Allowed || r.Result.Code != 400 {
		t.Fatalf("undecodable object: %+v", r.Result)
	}
}

// TestMalformedRequests: what is not an AdmissionReview is refused at the
// HTTP level (the API server's failurePolicy decides), a panic becomes a
// 500 refusal, and only POST is served.
func TestMalformedRequests(t *testing.T) {
	dir, ca := certs(t)
	s := webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", CertDir: dir})
	panicky := webhook.HandlerFunc(func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse { panic("boom") })
	if err := s.Register("/panic", webhook.Admission(panicky, nil)); err != nil {
		t.Fatal(err)
	}
	base, c := serve(t, s, ca)
	for _, body := range []string{`not json`, `{"apiVersion":"v1","kind":"Pod"}`, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`} {
		resp, err := c.Post(base+"/panic", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %s", body, resp.Status)
		}
	}
	resp, err := c.Get(base + "/panic")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %s", resp.Status)
	}
	r := review(t, c, base+"/panic", "admission.k8s.io/v1", &admissionv1.AdmissionRequest{UID: "p", Kind: configMapKind, Operation: admissionv1.Create})
	if r.Response.Allowed || r.Response.Result.Code != 500 || r.Response.Result.Message != "webhook panicked: boom" {
		t.Fatalf("panic: %+v", r.Response.Result)
	}
}

// TestCertificateReload: a certificate rewritten in CertDir is served at
// the next handshake; a server without a readable certificate does not
// start.
func TestCertificateReload(t *testing.T) {
	dir, ca := certs(t)
	s := webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", CertDir: dir})
	serve(t, s, ca)
	first := peerCertificate(t, s.Addr(), ca.Pool())
	if first.Subject.CommonName != "webhook" {
		t.Fatalf("served %s", first.Subject.CommonName)
	}
	time.Sleep(20 * time.Millisecond) // a new modification time even on coarse clocks
	writeServing(t, ca, dir, "rotated")
	if got := peerCertificate(t, s.Addr(), ca.Pool()); got.Subject.CommonName != "rotated" {
		t.Fatalf("after rotation served %s", got.Subject.CommonName)
	}

	bad := webhook.NewServer(webhook.Options{Addr: "127.0.0.1:0", CertDir: t.TempDir()})
	if err := bad.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "serving certificate") {
		t.Fatalf("start without a certificate: %v", err)
	}
}
