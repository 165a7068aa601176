package scheme

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// TestLeadingTypeMetaAgreesWithDefault: on every document, the fast path
// returns what apimachinery's DefaultMetaFactory returns, or that factory's
// own answer when the document is not of the fast path's shape.
func TestLeadingTypeMetaAgreesWithDefault(t *testing.T) {
	docs := []string{
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`,
		"{ \"kind\" : \"Pod\" ,\n \"apiVersion\" : \"v1\" }",
		`{"metadata":{"name":"a"},"kind":"Pod","apiVersion":"v1"}`,
		`{"kind":"Pod","metadata":{},"apiVersion":"v1"}`,
		`{"kind":"Pod"}`,
		`{"apiVersion":"v1"}`,
		`{"kind":"P\u006fd","apiVersion":"v1"}`,
		`{"kind":"Pod","apiVersion":"a/b/c"}`,
		`{"kind":"Pod","kind":"Node"}`,
		`{"kind":"","apiVersion":"v1"}`,
		`{}`,
		`[]`,
		``,
		`{"kind":`,
		`{"kind":"Pod","apiVersion":"v1"`,
	}
	for _, doc := range docs {
		want, wantErr := json.DefaultMetaFactory.Interpret([]byte(doc))
		got, gotErr := leadingTypeMeta{}.Interpret([]byte(doc))
		if (wantErr != nil) != (gotErr != nil) {
			// Only a truncated document that starts well may differ: the
			// fast path answers, and the decode that follows rejects it.
			if doc == `{"kind":"Pod","apiVersion":"v1"` && gotErr == nil {
				continue
			}
			t.Errorf("%q: error %v, want %v", doc, gotErr, wantErr)
			continue
		}
		if wantErr == nil && *got != *want {
			t.Errorf("%q: %v, want %v", doc, got, want)
		}
	}
}

// FuzzLeadingTypeMeta: on any input the fast path either agrees with the
// default factory or is one that the full decode rejects (invalid JSON).
func FuzzLeadingTypeMeta(f *testing.F) {
	f.Add([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{}}`))
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, wantErr := json.DefaultMetaFactory.Interpret(doc)
		got, gotErr := leadingTypeMeta{}.Interpret(doc)
		if wantErr == nil && (gotErr != nil || *got != *want) {
			t.Fatalf("%q: got %v %v, want %v", doc, got, gotErr, want)
		}
	})
}
