package rest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// note is a Go type of the client's own for ConfigMaps, unknown to the
// rest client's scheme, as a user's type for a custom resource is.
type note struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

func (n *note) DeepCopyObject() runtime.Object {
	out := &note{TypeMeta: n.TypeMeta}
	n.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if n.Data != nil {
		out.Data = make(map[string]string, len(n.Data))
		for k, v := range n.Data {
			out.Data[k] = v
		}
	}
	return out
}

type noteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []note `json:"items"`
}

func (l *noteList) DeepCopyObject() runtime.Object {
	out := &noteList{TypeMeta: l.TypeMeta, Items: make([]note, len(l.Items))}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*note)
	}
	return out
}

// notesCRD serves notes.example.com/v1 Note, whose objects keep any
// fields.
const notesCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "notes.example.com"},
 "spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "notes", "singular": "note", "kind": "Note"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}`

// serveNotes creates the notes CRD and waits until notes are served.
func serveNotes(t *testing.T, c *rest.Client) schema.GroupVersionResource {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(notesCRD)); err != nil {
		t.Fatal(err)
	}
	crds := rest.Dynamic(c, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, false)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "notes"}
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, "notes served", func() error {
		_, err := rest.Dynamic(c, gvr, true).Namespace("default").List(ctx, metav1.ListOptions{})
		return err
	})
	return gvr
}

// TestWithKindForUnknownTypes: an object of a Go type the client's scheme
// does not know, sent without TypeMeta to a custom resource, is refused
// by the server (no kind); WithKind supplies apiVersion and kind without
// touching the caller's object, for creates and updates; an object's own
// TypeMeta still wins.
func TestWithKindForUnknownTypes(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	notes := rest.For[*note, *noteList](c, serveNotes(t, c), true).Namespace("default")
	n := &note{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Data: map[string]string{"k": "v"}}
	if _, err := notes.Create(ctx, n, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "Kind") {
		t.Fatalf("create without a kind: err %v, want the server's missing-kind error", err)
	}

	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Note"}
	kinded := notes.WithKind(kind)
	got, err := kinded.Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create WithKind: %v", err)
	}
	if got.Data["k"] != "v" || got.GroupVersionKind() != kind {
		t.Fatalf("created %+v", got)
	}
	if !n.GroupVersionKind().Empty() {
		t.Fatalf("the caller's object was changed: %+v", n.TypeMeta)
	}
	got.TypeMeta = metav1.TypeMeta{}
	got.Data["k"] = "v2"
	if got, err = kinded.Update(ctx, got, metav1.UpdateOptions{}); err != nil || got.Data["k"] != "v2" {
		t.Fatalf("update WithKind: %+v, %v", got, err)
	}

	// The object's own TypeMeta wins over WithKind's.
	wrong := notes.WithKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	own := &note{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Note"}, ObjectMeta: metav1.ObjectMeta{Name: "n2"}}
	if _, err := wrong.Create(ctx, own, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with own TypeMeta: %v", err)
	}
}

// TestSchemeNamesUserTypes: a client built with NewWithScheme over a scheme
// holding the user's type (its AddToScheme, nothing else) sends the kind
// of objects without TypeMeta, decodes them, and leaves the caller's
// object untouched; the default scheme holds every built-in kind.
func TestSchemeNamesUserTypes(t *testing.T) {
	ctx := context.Background()
	srv, c := start(t, nil)
	s, err := rest.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kind := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Note"}
	s.AddKnownTypeWithName(kind, &note{})
	s.AddKnownTypeWithName(kind.GroupVersion().WithKind("NoteList"), &noteList{})
	sc, err := rest.NewWithScheme(srv.RESTConfig(t), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.CloseIdleConnections)
	if sc.Scheme() != s {
		t.Fatal("Scheme() is not the scheme given")
	}
	notes := rest.For[*note, *noteList](sc, serveNotes(t, c), true).Namespace("default")
	n := &note{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Data: map[string]string{"k": "v"}}
	got, err := notes.Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through the scheme: %v", err)
	}
	if got.Data["k"] != "v" || got.GroupVersionKind() != kind || !n.GroupVersionKind().Empty() {
		t.Fatalf("created %+v from %+v", got, n)
	}
	list, err := notes.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "n1" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	for _, k := range []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Pod"),
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "apps", Version: "v1beta2", Kind: "Deployment"}} {
		if !c.Scheme().Recognizes(k) {
			t.Errorf("the default scheme lacks %s", k)
		}
	}
}
