package manager_test

import (
	"context"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/testenv"
)

// memo is a Go type of the user's own for the custom resource
// example.com/v1 Memo, registered in the manager's scheme.
type memo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

func (m *memo) DeepCopyObject() runtime.Object {
	out := &memo{TypeMeta: m.TypeMeta, Data: maps.Clone(m.Data)}
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

type memoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []memo `json:"items"`
}

func (l *memoList) DeepCopyObject() runtime.Object {
	out := &memoList{TypeMeta: l.TypeMeta, Items: make([]memo, len(l.Items))}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*memo)
	}
	return out
}

const memosCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "memos.example.com"},
 "spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "memos", "singular": "memo", "kind": "Memo"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}`

// TestResourceOfUserType: with a custom resource's Go type in the
// manager's scheme, Resource maps it through discovery and writes
// objects without TypeMeta (the server needs the kind; it comes from the
// scheme), and Informer caches them.
func TestResourceOfUserType(t *testing.T) {
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	c, err := rest.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(memosCRD)); err != nil {
		t.Fatal(err)
	}
	crds := rest.Dynamic(c, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, false)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, "memos served", func() error {
		_, err := c.ServerResourcesForGroupVersion(ctx, gv)
		return err
	})

	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv.WithKind("Memo"), &memo{})
	scheme.AddKnownTypeWithName(gv.WithKind("MemoList"), &memoList{})
	m := newManager(t, env.Config, manager.Options{Scheme: scheme})
	memos, err := manager.Resource[*memo, *memoList](m)
	if err != nil {
		t.Fatal(err)
	}
	created, err := memos.Namespace("default").Create(ctx, &memo{ObjectMeta: metav1.ObjectMeta{Name: "m1"},
		Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create without TypeMeta: %v", err)
	}
	if created.Kind != "Memo" || created.Data["k"] != "v" {
		t.Fatalf("created %+v", created)
	}
	inf, mp, err := manager.Informer[*memo](m)
	if err != nil {
		t.Fatal(err)
	}
	if mp.GVR != gv.WithResource("memos") || !mp.Namespaced {
		t.Fatalf("mapping %+v", mp)
	}
	s := start(m)
	defer func() {
		if err := s.stop(t); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	select {
	case <-m.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("manager not ready")
	}
	got, err := inf.Lister().Namespace("default").Get("m1")
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("cached memo %+v, %v", got, err)
	}
}
