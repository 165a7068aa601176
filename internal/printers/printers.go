package printers

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// For returns the table convertor of a built-in kind (group "" for the
// core group), or nil if the kind has none. Ages are computed against the
// wall clock.
func For(group, kind string) registry.TableConvertor {
	return ForClock(group, kind, time.Now)
}

// ForClock is For with ages computed against now. Each group's kinds are
// in the file of that group.
func ForClock(group, kind string, now func() time.Time) registry.TableConvertor {
	switch group {
	case "":
		return coreTable(kind, now)
	case "apps":
		return appsTable(kind, now)
	case "batch":
		return batchTable(kind, now)
	case "autoscaling":
		return autoscalingTable(kind, now)
	case "policy":
		return policyTable(kind, now)
	case "coordination.k8s.io":
		return coordinationTable(kind, now)
	case "apiextensions.k8s.io":
		return apiextensionsTable(kind, now)
	case "scheduling.k8s.io":
		return schedulingTable(kind, now)
	case "node.k8s.io":
		return nodeTable(kind, now)
	case "discovery.k8s.io":
		return discoveryTable(kind, now)
	case "networking.k8s.io":
		return networkingTable(kind, now)
	case "flowcontrol.apiserver.k8s.io":
		return flowcontrolTable(kind, now)
	case "events.k8s.io":
		return eventsTable(kind, now)
	case "authentication.k8s.io":
		return authenticationTable(kind, now)
	case "authorization.k8s.io":
		return authorizationTable(kind, now)
	case "certificates.k8s.io":
		return certificatesTable(kind, now)
	case "rbac.authorization.k8s.io":
		return rbacTable(kind, now)
	case "storage.k8s.io":
		return storageTable(kind, now)
	case "apiregistration.k8s.io":
		return apiregistrationTable(kind, now)
	case "storagemigration.k8s.io":
		return storagemigrationTable(kind, now)
	case "resource.k8s.io":
		return resourceTable(kind, now)
	case "admissionregistration.k8s.io":
		return admissionregistrationTable(kind, now)
	}
	return nil
}

// table renders objects of Go type T. cells must return one cell per
// column, in column order, whatever the columns' priorities: the server
// sends every column and kubectl hides the wide ones.
type table[T runtime.Object] struct {
	columns []metav1.TableColumnDefinition
	cells   func(obj T, now time.Time) []interface{}
	now     func() time.Time
}

func newTable[T runtime.Object](columns []metav1.TableColumnDefinition, cells func(T, time.Time) []interface{}, now func() time.Time) *table[T] {
	return &table[T]{columns: columns, cells: cells, now: now}
}

// Columns returns a copy of the column definitions.
func (t *table[T]) Columns() []metav1.TableColumnDefinition {
	return slices.Clone(t.columns)
}

// Cells renders obj; it fails only if obj is not a T.
func (t *table[T]) Cells(obj runtime.Object) ([]interface{}, error) {
	o, ok := obj.(T)
	if !ok {
		var want T
		return nil, fmt.Errorf("printers: cannot print %T as %T", obj, want)
	}
	return t.cells(o, t.now()), nil
}

// Column helpers. NAME has format "name": kubectl finds the object name
// there (for example for `kubectl get -o name` on tables).
func nameColumn(priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Priority: priority,
		Description: "Name must be unique within a namespace."}
}

func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

func wide(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: 1, Description: description}
}

var ageColumn = column("Age", "string", "Time since the object was created.")

// age renders the time since ts as kubectl does ("<unknown>" when unset).
func age(ts metav1.Time, now time.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

func microAge(ts metav1.MicroTime, now time.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// orNone returns s, or "<none>" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
