package builtin

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// resource returns the built-in descriptor of a plural resource name.
func lookup(t testing.TB, name string) *registry.Resource {
	t.Helper()
	for _, r := range Resources() {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %q", name)
	return nil
}

// create runs the server's create pipeline: Default, PrepareForCreate,
// Validate.
func create(r *registry.Resource, obj runtime.Object) field.ErrorList {
	r.Strategy.Default(obj)
	r.Strategy.PrepareForCreate(obj)
	return r.Strategy.Validate(obj)
}

// update runs the server's update pipeline on the main resource.
func update(r *registry.Resource, obj, old runtime.Object) field.ErrorList {
	r.Strategy.PrepareForUpdate(obj, old)
	r.Strategy.Default(obj)
	return r.Strategy.ValidateUpdate(obj, old)
}

// updateStatus runs the server's status-update pipeline.
func updateStatus(r *registry.Resource, obj, old runtime.Object) field.ErrorList {
	r.Status.PrepareForUpdate(obj, old)
	return r.Status.ValidateUpdate(obj, old)
}

// errorSummary renders errors as sorted "path:Type" strings, the form the
// tables below expect.
func errorSummary(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Field + ":" + string(e.Type)
	}
	slices.Sort(out)
	return out
}

// expectErrors fails unless errs are exactly want (sorted "path:Type").
func expectErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := errorSummary(errs); !slices.Equal(got, want) {
		t.Errorf("errors = %v, want %v\n%s", got, want, errs.ToAggregate())
	}
}

// expectValid fails if errs is not empty.
func expectValid(t *testing.T, errs field.ErrorList) {
	t.Helper()
	if len(errs) > 0 {
		t.Errorf("unexpected errors: %v", errs.ToAggregate())
	}
}

// expectFields fails unless the attrs of obj are exactly want.
func expectFields(t *testing.T, r *registry.Resource, obj runtime.Object, want fields.Set) {
	t.Helper()
	_, got, err := r.Attrs(obj)
	if err != nil {
		t.Fatalf("attrs: %v", err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("fields =\n  %s\nwant\n  %s", got, want)
	}
}
