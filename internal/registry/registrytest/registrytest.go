package registrytest

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Find returns the descriptor of a plural resource name among resources.
func Find(t testing.TB, resources []*registry.Resource, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %q", name)
	return nil
}

// Create runs the server's create pipeline: Default, PrepareForCreate,
// Validate.
func Create(r *registry.Resource, obj runtime.Object) field.ErrorList {
	r.Strategy.Default(obj)
	r.Strategy.PrepareForCreate(obj)
	return r.Strategy.Validate(obj)
}

// Update runs the server's update pipeline on the main resource.
func Update(r *registry.Resource, obj, old runtime.Object) field.ErrorList {
	r.Strategy.PrepareForUpdate(obj, old)
	r.Strategy.Default(obj)
	return r.Strategy.ValidateUpdate(obj, old)
}

// UpdateStatus runs the server's status-update pipeline.
func UpdateStatus(r *registry.Resource, obj, old runtime.Object) field.ErrorList {
	r.Status.PrepareForUpdate(obj, old)
	return r.Status.ValidateUpdate(obj, old)
}

// ErrorSummary renders errors as sorted "path:Type" strings.
func ErrorSummary(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Field + ":" + string(e.Type)
	}
	slices.Sort(out)
	return out
}

// ExpectErrors fails unless errs are exactly want ("path:Type", any
// order).
func ExpectErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := ErrorSummary(errs); !slices.Equal(got, want) {
		t.Errorf("errors = %v, want %v\n%s", got, want, errs.ToAggregate())
	}
}

// ExpectValid fails if errs is not empty.
func ExpectValid(t *testing.T, errs field.ErrorList) {
	t.Helper()
	if len(errs) > 0 {
		t.Errorf("unexpected errors: %v", errs.ToAggregate())
	}
}

// ExpectFields fails unless the selectable fields of obj are exactly want.
func ExpectFields(t *testing.T, r *registry.Resource, obj runtime.Object, want fields.Set) {
	t.Helper()
	_, got, err := r.Attrs(obj)
	if err != nil {
		t.Fatalf("attrs: %v", err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("fields =\n  %s\nwant\n  %s", got, want)
	}
}
