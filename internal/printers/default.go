package printers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// createdAtColumns are the columns kube-apiserver's default table shows,
// for kinds without printers of their own (Roles, ClusterRoles, the
// review kinds): the name and the creation time.
var createdAtColumns = []metav1.TableColumnDefinition{
	nameColumn(0),
	column("Created At", "date", "CreationTimestamp is a timestamp representing the server time when this object was created."),
}

// createdAtTable renders objects of T with createdAtColumns.
func createdAtTable[T interface {
	runtime.Object
	metav1.Object
}](now func() time.Time) *table[T] {
	return newTable(createdAtColumns, func(o T, _ time.Time) []interface{} {
		return []interface{}{o.GetName(), o.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	}, now)
}
