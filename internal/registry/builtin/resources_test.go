package builtin

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TestDiscovery pins every descriptor field discovery advertises to what a
// Kubernetes 1.3x server shows.
func TestDiscovery(t *testing.T) {
	type want struct {
		group, kind, singular       string
		short, categories           []string
		namespaced, status, scale   bool
		subresources                string
		createOnUpdate              bool
		deletionHolder, gracefulDel bool
	}
	all := []string{"all"}
	cases := map[string]want{
		"namespaces":  {kind: "Namespace", singular: "namespace", short: []string{"ns"}, status: true, subresources: "finalize", deletionHolder: true},
		"pods":        {kind: "Pod", singular: "pod", short: []string{"po"}, categories: all, namespaced: true, status: true, subresources: "binding", gracefulDel: true},
		"nodes":       {kind: "Node", singular: "node", short: []string{"no"}, status: true},
		"services":    {kind: "Service", singular: "service", short: []string{"svc"}, categories: all, namespaced: true, status: true, createOnUpdate: true},
		"configmaps":  {kind: "ConfigMap", singular: "configmap", short: []string{"cm"}, namespaced: true},
		"secrets":     {kind: "Secret", singular: "secret", namespaced: true},
		"events":      {kind: "Event", singular: "event", short: []string{"ev"}, namespaced: true, createOnUpdate: true},
		"leases":      {group: "coordination.k8s.io", kind: "Lease", singular: "lease", namespaced: true, createOnUpdate: true},
		"deployments": {group: "apps", kind: "Deployment", singular: "deployment", short: []string{"deploy"}, categories: all, namespaced: true, status: true, scale: true},
		"replicasets": {group: "apps", kind: "ReplicaSet", singular: "replicaset", short: []string{"rs"}, categories: all, namespaced: true, status: true, scale: true},
		"customresourcedefinitions": {group: "apiextensions.k8s.io", kind: "CustomResourceDefinition", singular: "customresourcedefinition",
			short: []string{"crd", "crds"}, categories: []string{"api-extensions"}, status: true, deletionHolder: true},
	}
	got := Resources()
	if len(got) != len(cases) {
		t.Fatalf("%d resources, want %d", len(got), len(cases))
	}
	for _, r := range got {
		w, ok := cases[r.Resource]
		if !ok {
			t.Errorf("unexpected resource %q", r.Resource)
			continue
		}
		_, createOnUpdate := r.Strategy.(registry.CreateOnUpdateStrategy)
		_, holder := r.Strategy.(registry.DeletionHolder)
		_, graceful := r.Strategy.(registry.GracefulDeleteStrategy)
		gotW := want{
			group: r.Group, kind: r.Kind, singular: r.Singular, short: r.ShortNames, categories: r.Categories,
			namespaced: r.Namespaced, status: r.Status != nil, scale: r.Scale != nil, subresources: subresourceNames(r),
			createOnUpdate: createOnUpdate, deletionHolder: holder, gracefulDel: graceful,
		}
		if fmt.Sprint(gotW) != fmt.Sprint(w) {
			t.Errorf("%s:\n got %+v\nwant %+v", r.Resource, gotW, w)
		}
		if r.Version != "v1" || r.ListKind != r.Kind+"List" {
			t.Errorf("%s: version %q listKind %q", r.Resource, r.Version, r.ListKind)
		}
		if r.Attrs == nil || r.Table == nil || r.Strategy == nil {
			t.Errorf("%s: missing attrs, table or strategy", r.Resource)
		}
	}
}

// TestNewTypes checks New and NewList return distinct objects of matching
// kinds, and that the table's name column has format "name".
func TestNewTypes(t *testing.T) {
	for _, r := range Resources() {
		a, b := r.New(), r.New()
		if a == b {
			t.Errorf("%s: New returns a shared object", r.Resource)
		}
		if got, want := fmt.Sprintf("%T", r.NewList()), fmt.Sprintf("%TList", a); got != want {
			t.Errorf("%s: NewList is %s, want %s", r.Resource, got, want)
		}
		cols := r.Table.Columns()
		if !slices.ContainsFunc(cols, func(c metav1.TableColumnDefinition) bool { return c.Name == "Name" && c.Format == "name" }) {
			t.Errorf("%s: no Name column with format name", r.Resource)
		}
		cells, err := r.Table.Cells(a)
		if err != nil || len(cells) != len(cols) {
			t.Errorf("%s: %d cells for %d columns (err %v)", r.Resource, len(cells), len(cols), err)
		}
	}
}

// TestWrongType checks hooks reject, rather than panic on, objects of
// another kind.
func TestWrongType(t *testing.T) {
	rs := Resources()
	for i, r := range rs {
		other := rs[(i+1)%len(rs)].New()
		r.Strategy.Default(other)
		r.Strategy.PrepareForCreate(other)
		r.Strategy.PrepareForUpdate(other, other)
		if errs := r.Strategy.Validate(other); len(errs) != 1 {
			t.Errorf("%s: Validate(%T) = %v", r.Resource, other, errs)
		}
		if errs := r.Strategy.ValidateUpdate(other, r.New()); len(errs) != 1 {
			t.Errorf("%s: ValidateUpdate(%T) = %v", r.Resource, other, errs)
		}
		if _, _, err := r.Attrs(other); err == nil {
			t.Errorf("%s: Attrs(%T) did not fail", r.Resource, other)
		}
		if _, err := r.Table.Cells(other); err == nil {
			t.Errorf("%s: Cells(%T) did not fail", r.Resource, other)
		}
		if r.Scale != nil {
			if _, _, _, err := r.Scale.Replicas(other); err == nil {
				t.Errorf("%s: Scale.Replicas(%T) did not fail", r.Resource, other)
			}
		}
	}
}

func subresourceNames(r *registry.Resource) string {
	var names []string
	for _, s := range r.Subresources {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}
