package client_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/testenv"
)

// TestNewFromConfig: a client made from a Config alone, as tests make
// controller-runtime's with client.New(cfg, ...), reads from the server:
// what it wrote is there at once, without a manager or a cache.
func TestNewFromConfig(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c, err := client.New(client.Options{Config: env.Config})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, cm("direct", map[string]string{"app": "d"}, map[string]string{"k": "v1"})); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "direct"}, got); err != nil || got.Data["k"] != "v1" {
		t.Fatalf("get after create: %v, data %v", err, got.Data)
	}
	got.Data["k"] = "v2"
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"app": "d"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Data["k"] != "v2" {
		t.Fatalf("list after update: %+v", list.Items)
	}
	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(got), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}
	if c.Scheme() == nil {
		t.Fatal("no scheme")
	}
}

// TestDiscoveryMapperSeesNewKinds: the mapper remembers a group version's
// resources, yet maps a kind of that group version established after it
// read them (a second CRD of the same group).
func TestDiscoveryMapperSeesNewKinds(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c, err := client.New(client.Options{Config: env.Config})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, kind := range []string{"First", "Second"} {
		createCRD(t, c, kind)
		gvk := schema.GroupVersionKind{Group: "direct.example.com", Version: "v1", Kind: kind}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(kind + "List"))
		testenv.Eventually(t, 10*time.Second, kind+" served", func() string {
			if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
				return err.Error()
			}
			return ""
		})
	}
}

// createCRD creates a namespaced CRD of kind in direct.example.com/v1.
func createCRD(t *testing.T, c client.Client, kind string) {
	t.Helper()
	plural := map[string]string{"First": "firsts", "Second": "seconds"}[kind]
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".direct.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "direct.example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object",
					XPreserveUnknownFields: func(b bool) *bool { return &b }(true)}}}},
		},
	}
	if err := c.Create(context.Background(), crd); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
}
