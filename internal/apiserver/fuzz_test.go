package apiserver

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/setpoint-dev/setpoint/internal/registry/builtin"
	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// fuzzEntries returns an entry per built-in resource, without storage: the
// decoding path needs only the descriptor and the codecs.
func fuzzEntries() (*Server, []*entry) {
	s := &Server{codecs: scheme.New()}
	var es []*entry
	for _, r := range builtin.Resources() {
		_, supported, err := r.Attrs(r.New())
		if err != nil {
			panic(err)
		}
		es = append(es, &entry{res: r, fields: supported})
	}
	return s, es
}

// FuzzDecodeObject feeds arbitrary bodies to the request decoder under
// every field-validation mode and content type. Properties: no panic; a
// successful decode yields the resource's Go type with its apiVersion and
// kind; and that object survives an encode/decode round trip unchanged.
// Defaulting and validation then run on it without panicking.
func FuzzDecodeObject(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"100m"}}}]}}`,
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n",
		`{"metadata":{"name":"x","labels":{"a":"b"}},"unknown":1,"metadata":{}}`,
		`{"apiVersion":"v1","kind":"Pod"`,
		`[]`, `null`, `{"kind":1}`,
	} {
		f.Add([]byte(seed), uint8(0), uint8(0))
	}
	s, entries := fuzzEntries()
	modes := []fieldValidation{validationStrict, validationWarn, validationIgnore}
	f.Fuzz(func(t *testing.T, body []byte, which, mode uint8) {
		e := entries[int(which)%len(entries)]
		fv := modes[int(mode)%len(modes)]
		for _, yaml := range []bool{false, true} {
			strict, lax := s.codecs.StrictJSON, s.codecs.JSON
			if yaml {
				strict, lax = s.codecs.StrictYAML, s.codecs.YAML
			}
			obj, err := s.decodeInto(httptest.NewRecorder(), e, pick(fv, strict, lax), fv, body)
			if err != nil {
				if statusOf(err).Code == 0 {
					t.Fatalf("error without a status code: %v", err)
				}
				continue
			}
			if reflect.TypeOf(obj) != reflect.TypeOf(e.res.New()) {
				t.Fatalf("decoded %T for %s", obj, e.res.Resource)
			}
			if gvk := obj.GetObjectKind().GroupVersionKind(); gvk != e.res.GVK() {
				t.Fatalf("decoded object has kind %v, want %v", gvk, e.res.GVK())
			}
			var buf bytes.Buffer
			if err := s.codecs.JSON.Encode(obj, &buf); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			again, err := s.decodeInto(httptest.NewRecorder(), e, s.codecs.StrictJSON, validationStrict, buf.Bytes())
			if err != nil {
				t.Fatalf("round trip of %s failed: %v", buf.Bytes(), err)
			}
			if !equality.Semantic.DeepEqual(obj, again) {
				t.Fatalf("round trip changed the object:\n%#v\n%#v", obj, again)
			}
			if e.res.Strategy == nil { // a virtual resource (a review): no hooks to run
				continue
			}
			e.res.Strategy.Default(obj)
			e.res.Strategy.PrepareForCreate(obj)
			_ = e.res.Strategy.Validate(obj)
		}
	})
}

// FuzzSelectors feeds arbitrary label and field selectors to the request
// parser. Properties: no panic; an accepted selector's String() parses back
// to a selector that matches the same objects.
func FuzzSelectors(f *testing.F) {
	for _, seed := range [][2]string{
		{"app=web,tier!=db", "metadata.name=x"},
		{"env in (a,b),!legacy", "status.phase!=Running,spec.nodeName=n1"},
		{"a", "metadata.namespace==default"},
		{"x notin (y)", ""},
		{"=", "=="},
		{"a=b=c", "metadata.name=a,metadata.name=b"},
	} {
		f.Add(seed[0], seed[1])
	}
	_, entries := fuzzEntries()
	var pods *entry
	for _, e := range entries {
		if e.res.Resource == "pods" && e.res.Group == "" {
			pods = e
		}
	}
	samples := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default", Labels: map[string]string{"app": "web", "env": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "y", Namespace: "kube-system", Labels: map[string]string{"tier": "db", "legacy": ""}},
			Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
	}
	f.Fuzz(func(t *testing.T, label, field string) {
		sel, err := parseSelectors(url.Values{"labelSelector": {label}, "fieldSelector": {field}})
		if err != nil {
			if statusOf(err).Code != 400 {
				t.Fatalf("selector error is not a 400: %v", err)
			}
			return
		}
		if err := checkFieldSelector(pods, sel.field); err != nil {
			if statusOf(err).Code != 400 {
				t.Fatalf("field check error is not a 400: %v", err)
			}
			return
		}
		l2, err := labels.Parse(sel.label.String())
		if err != nil {
			t.Fatalf("label selector %q re-parse of %q: %v", label, sel.label.String(), err)
		}
		f2, err := fields.ParseSelector(sel.field.String())
		if err != nil {
			t.Fatalf("field selector %q re-parse of %q: %v", field, sel.field.String(), err)
		}
		for _, p := range samples {
			ls, fs, err := pods.res.Attrs(p)
			if err != nil {
				t.Fatal(err)
			}
			if sel.label.Matches(ls) != l2.Matches(ls) || sel.field.Matches(fs) != f2.Matches(fs) {
				t.Fatalf("selectors %q / %q match differently after a round trip", label, field)
			}
		}
	})
}
