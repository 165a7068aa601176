package crconversion

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// These tests exercise review building and answer checking with an
// in-process Caller; the HTTPS exchange is tested with a real server in
// package apiserver and in conformance/.

func testCRD(reviews ...string) *apiextv1.CustomResourceDefinition {
	u := "https://127.0.0.1:1/convert"
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.conversion.setpoint.test"},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: "conversion.setpoint.test", Conversion: &apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook:  &apiextv1.WebhookConversion{ClientConfig: &apiextv1.WebhookClientConfig{URL: &u}, ConversionReviewVersions: reviews},
		}},
	}
}

func widget(version, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conversion.setpoint.test/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name,
			"labels": map[string]any{"a": "1"}, "generation": int64(3)},
		"spec": map[string]any{"size": int64(1)},
	}}
}

// webhook answers a v1 review by converting every object with f.
func webhook(t *testing.T, calls *int, f func(o map[string]any, to string)) Caller {
	return CallerFunc(func(_ context.Context, in, out runtime.Object) error {
		*calls++
		req := in.(*apiextv1.ConversionReview).Request
		resp := &apiextv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range req.Objects {
			o := runtime.DeepCopyJSON(raw.Object.(*unstructured.Unstructured).Object)
			o["apiVersion"] = req.DesiredAPIVersion
			if f != nil {
				f(o, req.DesiredAPIVersion)
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Object: &unstructured.Unstructured{Object: o}})
		}
		r := out.(*apiextv1.ConversionReview)
		r.APIVersion, r.Kind = "apiextensions.k8s.io/v1", "ConversionReview"
		r.Response = resp
		return nil
	})
}

func newConverter(t *testing.T, call Caller, reviews ...string) *Converter {
	t.Helper()
	if len(reviews) == 0 {
		reviews = []string{"v1"}
	}
	c, err := New(testCRD(reviews...), call)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNoCallWhenNothingToConvert(t *testing.T) {
	calls := 0
	c := newConverter(t, webhook(t, &calls, nil))
	w := widget("v1", "a")
	got, err := c.Convert(context.Background(), w, "conversion.setpoint.test/v1")
	if err != nil || got != w {
		t.Fatalf("same version: got %v, %v; want the object itself", got, err)
	}
	empty := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "conversion.setpoint.test/v1", "kind": "Widget"}}
	if got, err = c.Convert(context.Background(), empty, "conversion.setpoint.test/v2"); err != nil || got.GetAPIVersion() != "conversion.setpoint.test/v2" {
		t.Fatalf("empty object: got %v, %v", got, err)
	}
	if _, err := c.ConvertList(context.Background(), []*unstructured.Unstructured{w, widget("v1", "b")}, "conversion.setpoint.test/v1"); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("webhook called %d times, want 0", calls)
	}
}

func TestConvertKeepsMetadataButLabelsAndAnnotations(t *testing.T) {
	calls := 0
	c := newConverter(t, webhook(t, &calls, func(o map[string]any, _ string) {
		m := o["metadata"].(map[string]any)
		m["labels"] = map[string]any{"b": "2"}
		m["annotations"] = map[string]any{"converted": "yes"}
		m["generation"] = int64(99)    // restored
		m["finalizers"] = []any{"x/y"} // dropped
		o["spec"] = map[string]any{"replicas": int64(1)}
	}))
	w := widget("v1", "a")
	got, err := c.Convert(context.Background(), w, "conversion.setpoint.test/v2")
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("calls = %d, want 1", calls)
	}
	if got.GetAPIVersion() != "conversion.setpoint.test/v2" || got.GetGeneration() != 3 || got.GetFinalizers() != nil {
		t.Fatalf("converted metadata not restored: %v", got.Object)
	}
	if got.GetLabels()["b"] != "2" || got.GetLabels()["a"] != "" || got.GetAnnotations()["converted"] != "yes" {
		t.Fatalf("labels/annotations not taken from the answer: %v", got.Object["metadata"])
	}
	if _, ok := got.Object["spec"].(map[string]any)["replicas"]; !ok {
		t.Fatalf("spec not converted: %v", got.Object)
	}
	if w.GetAPIVersion() != "conversion.setpoint.test/v1" || w.GetLabels()["a"] != "1" {
		t.Fatalf("input modified: %v", w.Object)
	}
}

func TestConvertListOneReviewInOrder(t *testing.T) {
	calls := 0
	var sent []string
	inner := webhook(t, &calls, nil)
	c := newConverter(t, CallerFunc(func(ctx context.Context, in, out runtime.Object) error {
		for _, o := range in.(*apiextv1.ConversionReview).Request.Objects {
			sent = append(sent, o.Object.(*unstructured.Unstructured).GetName())
		}
		return inner.Call(ctx, in, out)
	}))
	items := []*unstructured.Unstructured{widget("v1", "a"), widget("v2", "b"), widget("v1", "c")}
	got, err := c.ConvertList(context.Background(), items, "conversion.setpoint.test/v2")
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || strings.Join(sent, ",") != "a,c" {
		t.Fatalf("calls = %d, sent %v; want one review with a,c", calls, sent)
	}
	if got[1] != items[1] {
		t.Fatal("the item already at the version was replaced")
	}
	for i, g := range got {
		if g.GetAPIVersion() != "conversion.setpoint.test/v2" || g.GetName() != items[i].GetName() {
			t.Fatalf("item %d = %s %s", i, g.GetAPIVersion(), g.GetName())
		}
	}
}

func TestReviewVersionFirstSpoken(t *testing.T) {
	for _, tc := range []struct {
		reviews []string
		want    string
	}{{[]string{"v1beta1", "v1"}, "v1beta1"}, {[]string{"v9", "v1", "v1beta1"}, "v1"}} {
		c := newConverter(t, nil, tc.reviews...)
		if c.ReviewVersion() != tc.want {
			t.Errorf("%v: review %s, want %s", tc.reviews, c.ReviewVersion(), tc.want)
		}
	}
	if _, err := New(testCRD("v9"), nil); err == nil || err.Error() != "no supported conversion review versions" {
		t.Fatalf("New with no spoken review version: %v", err)
	}
}

func TestV1beta1Review(t *testing.T) {
	c := newConverter(t, CallerFunc(func(_ context.Context, in, out runtime.Object) error {
		req := in.(*apiextv1beta1.ConversionReview).Request
		if req.DesiredAPIVersion != "conversion.setpoint.test/v2" || req.UID == "" {
			t.Errorf("request %+v", req)
		}
		o := runtime.DeepCopyJSON(req.Objects[0].Object.(*unstructured.Unstructured).Object)
		o["apiVersion"] = req.DesiredAPIVersion
		// As Kubernetes: the uid and kind of a v1beta1 answer are not checked.
		out.(*apiextv1beta1.ConversionReview).Response = &apiextv1beta1.ConversionResponse{UID: "other",
			Result: metav1.Status{Status: metav1.StatusSuccess}, ConvertedObjects: []runtime.RawExtension{{Object: &unstructured.Unstructured{Object: o}}}}
		return nil
	}), "v1beta1")
	got, err := c.Convert(context.Background(), widget("v1", "a"), "conversion.setpoint.test/v2")
	if err != nil || got.GetAPIVersion() != "conversion.setpoint.test/v2" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestFailuresWordedAsKubernetes(t *testing.T) {
	const prefix = "conversion webhook for conversion.setpoint.test/v1, Kind=Widget "
	ok := func(f func(o map[string]any, to string)) func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
		return func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			calls := 0
			_ = webhook(t, &calls, f).Call(context.Background(), &apiextv1.ConversionReview{Request: req}, r)
		}
	}
	cases := []struct {
		name   string
		answer func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest)
		err    error
		want   string
	}{
		{name: "call error", err: errors.New(`Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`),
			want: prefix + `failed: Post "https://127.0.0.1:1/convert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`},
		{name: "wrong kind", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			r.APIVersion, r.Kind = "apiextensions.k8s.io/v1beta1", "ConversionReview"
		}, want: prefix + "failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview"},
		{name: "no response", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			r.APIVersion, r.Kind = "apiextensions.k8s.io/v1", "ConversionReview"
		}, want: prefix + "failed: no response provided"},
		{name: "wrong uid", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			ok(nil)(r, req)
			r.Response.UID = "nope"
		}, want: prefix + `failed: expected response.uid="00000000-uid", got "nope"`},
		{name: "failure message", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			ok(nil)(r, req)
			r.Response.Result = metav1.Status{Status: metav1.StatusFailure, Message: "cannot convert size"}
		}, want: prefix + "failed: cannot convert size"},
		{name: "failure without message", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			ok(nil)(r, req)
			r.Response.Result = metav1.Status{}
		}, want: prefix + "failed: response.result.status was '', not 'Success'"},
		{name: "too many objects", answer: func(r *apiextv1.ConversionReview, req *apiextv1.ConversionRequest) {
			ok(nil)(r, req)
			r.Response.ConvertedObjects = append(r.Response.ConvertedObjects, r.Response.ConvertedObjects[0])
		}, want: prefix + "returned 2 objects, expected 1"},
		{name: "wrong apiVersion", answer: ok(func(o map[string]any, _ string) { o["apiVersion"] = "conversion.setpoint.test/v3" }),
			want: prefix + "returned invalid object at index 0: invalid groupVersion (expected conversion.setpoint.test/v2, received conversion.setpoint.test/v3)"},
		{name: "wrong kind of object", answer: ok(func(o map[string]any, _ string) { o["kind"] = "Gadget" }),
			want: prefix + "returned invalid object at index 0: invalid kind (expected Widget, received Gadget)"},
		{name: "renamed", answer: ok(func(o map[string]any, _ string) { o["metadata"].(map[string]any)["name"] = "b" }),
			want: prefix + "returned invalid object: must have the same name: a != b"},
		{name: "new uid", answer: ok(func(o map[string]any, _ string) { o["metadata"].(map[string]any)["uid"] = "u2" }),
			want: prefix + "returned invalid object: must have the same UID: uid-a != u2"},
		{name: "bad label", answer: ok(func(o map[string]any, _ string) {
			o["metadata"].(map[string]any)["labels"] = map[string]any{"a": "-bad-"}
		}),
			want: prefix + `returned invalid metadata: metadata.labels: Invalid value: "-bad-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "no metadata", answer: ok(func(o map[string]any, _ string) { delete(o, "metadata") }),
			want: prefix + "returned invalid object: must have the same name: a != "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newConverter(t, CallerFunc(func(_ context.Context, in, out runtime.Object) error {
				if tc.err != nil {
					return tc.err
				}
				tc.answer(out.(*apiextv1.ConversionReview), in.(*apiextv1.ConversionReview).Request)
				return nil
			}))
			c.newUID = func() types.UID { return "00000000-uid" }
			_, err := c.Convert(context.Background(), widget("v1", "a"), "conversion.setpoint.test/v2")
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a StatusError", err)
			}
			if st := se.ErrStatus; st.Code != http.StatusInternalServerError || st.Reason != "" || st.Message != tc.want {
				t.Fatalf("status %d %q %q\nwant 500 \"\" %q", st.Code, st.Reason, st.Message, tc.want)
			}
		})
	}
}

func TestListFailureNamesIndex(t *testing.T) {
	calls := 0
	c := newConverter(t, webhook(t, &calls, func(o map[string]any, _ string) {
		if o["metadata"].(map[string]any)["name"] == "c" {
			o["kind"] = "Gadget"
		}
	}))
	items := []*unstructured.Unstructured{widget("v1", "a"), widget("v2", "b"), widget("v1", "c")}
	_, err := c.ConvertList(context.Background(), items, "conversion.setpoint.test/v2")
	want := "conversion webhook for conversion.setpoint.test/v1, Kind=Widget returned invalid converted object at index 1: invalid kind (expected Widget, received Gadget)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}
