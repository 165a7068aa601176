package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// writeResult sends an object or list in the negotiated view: as is, as a
// Table (kubectl get), or as PartialObjectMetadata.
func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, code int, mt mediaType, e *entry, obj runtime.Object) {
	if err := checkPartialShape(mt, e, obj); err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	out, err := s.view(r, mt, e, obj)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	s.resp.writeObject(w, r, code, mt, out)
}

// checkPartialShape refuses, as kube-apiserver (406), PartialObjectMetadata
// for a list and PartialObjectMetadataList for an object, naming the
// object's type as kube-apiserver's internal types are named.
func checkPartialShape(mt mediaType, e *entry, obj runtime.Object) error {
	if mt.As != "PartialObjectMetadata" || mt.AsList == meta.IsListType(obj) {
		return nil
	}
	if mt.AsList {
		return newStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, fmt.Sprintf(
			"you requested PartialObjectMetadataList, but the requested object is not a list (%s)", internalTypeName(e, e.res.Kind)))
	}
	return newStatusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, fmt.Sprintf(
		"you requested PartialObjectMetadata, but the requested object is a list (%s)", internalTypeName(e, e.res.ListKind)))
}

// internalTypeName is how kube-apiserver names the Go type of a kind in
// messages: its internal package (the group's first label, "core" for the
// legacy group and events.k8s.io) and the kind; custom resources are
// unstructured.
func internalTypeName(e *entry, kind string) string {
	if e.res.Unstructured {
		if strings.HasSuffix(kind, "List") {
			return "*unstructured.UnstructuredList"
		}
		return "*unstructured.Unstructured"
	}
	pkg, _, _ := strings.Cut(e.res.Group, ".")
	if pkg == "" || e.res.Group == "events.k8s.io" {
		pkg = "core"
	}
	return "*" + pkg + "." + kind
}

// view converts obj to the view mt asks for, in the meta.k8s.io version it
// names.
func (s *Server) view(r *http.Request, mt mediaType, e *entry, obj runtime.Object) (runtime.Object, error) {
	var out runtime.Object
	var err error
	switch mt.As {
	case "Table":
		out, err = s.toTable(e, obj, r.URL.Query().Get("includeObject"))
	case "PartialObjectMetadata":
		out, err = toPartial(obj)
	default:
		return obj, nil
	}
	if err == nil && mt.AsVersion == "v1beta1" {
		asV1beta1(out)
	}
	return out, err
}

// asV1beta1 relabels a view (and the metadata objects of a Table's rows)
// as meta.k8s.io/v1beta1, whose Table and PartialObjectMetadata have v1's
// shape.
func asV1beta1(view runtime.Object) {
	relabel := func(o runtime.Object) {
		if o == nil {
			return
		}
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.Group == metav1.GroupName {
			gvk.Version = "v1beta1"
			o.GetObjectKind().SetGroupVersionKind(gvk)
		}
	}
	relabel(view)
	if t, ok := view.(*metav1.Table); ok {
		for i := range t.Rows {
			relabel(t.Rows[i].Object.Object)
		}
	}
}

var (
	tableGVK   = metav1.SchemeGroupVersion.WithKind("Table")
	partialGVK = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")
	partialLGV = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList")
)

// defaultColumns are what Kubernetes shows for kinds without printers.
var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	{Name: "Created At", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
}

// toTable renders obj (an object or a list) as a meta.k8s.io/v1 Table.
// include is the includeObject parameter: None, Metadata (default) or
// Object.
func (s *Server) toTable(e *entry, obj runtime.Object, include string) (*metav1.Table, error) {
	t := &metav1.Table{}
	t.SetGroupVersionKind(tableGVK)
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = listItems(obj); err != nil {
			return nil, err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		t.ResourceVersion, t.Continue, t.RemainingItemCount = lm.GetResourceVersion(), lm.GetContinue(), lm.GetRemainingItemCount()
	} else {
		t.ResourceVersion = objectMeta(obj).GetResourceVersion()
	}
	if s, ok := e.res.Table.(registry.RowSorter); ok && len(items) > 1 {
		items = slices.Clone(items)
		s.SortRows(items)
	}
	if e.res.Table != nil {
		t.ColumnDefinitions = e.res.Table.Columns()
	} else {
		t.ColumnDefinitions = defaultColumns
	}
	var listCells [][]interface{}
	if lt, ok := e.res.Table.(registry.ListTableConvertor); ok && meta.IsListType(obj) {
		var err error
		if listCells, err = lt.ListCells(items); err != nil || len(listCells) != len(items) {
			return nil, apierrors.NewInternalError(fmt.Errorf("print %s: %d rows for %d items: %v", e.res.Resource, len(listCells), len(items), err))
		}
	}
	t.Rows = make([]metav1.TableRow, 0, len(items))
	for i, item := range items {
		var cells []interface{}
		if listCells != nil {
			cells = listCells[i]
		}
		row, err := s.tableRow(e, item, cells, include)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// tableRow renders one item; cells, when not nil, are its cells as the
// list convertor computed them.
func (s *Server) tableRow(e *entry, item runtime.Object, cells []interface{}, include string) (metav1.TableRow, error) {
	var row metav1.TableRow
	m := objectMeta(item)
	if cells != nil {
		row.Cells = cells
	} else if e.res.Table != nil {
		cells, err := e.res.Table.Cells(item)
		if err != nil {
			return row, apierrors.NewInternalError(fmt.Errorf("print %s %s: %w", e.res.Resource, m.GetName(), err))
		}
		row.Cells = cells
		if rc, ok := e.res.Table.(registry.RowConditioner); ok {
			row.Conditions = rc.RowConditions(item)
		}
	} else {
		row.Cells = []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format("2006-01-02T15:04:05Z")}
	}
	switch include {
	case "None":
	case "Object":
		row.Object.Object = item
	case "", "Metadata":
		p, err := toPartial(item)
		if err != nil {
			return row, err
		}
		row.Object.Object = p
	default:
		return row, apierrors.NewBadRequest(fmt.Sprintf(
			"Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", include))
	}
	return row, nil
}

// toPartial converts an object or list to PartialObjectMetadata(List).
func toPartial(obj runtime.Object) (runtime.Object, error) {
	if meta.IsListType(obj) {
		items, err := listItems(obj)
		if err != nil {
			return nil, err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out := &metav1.PartialObjectMetadataList{}
		out.SetGroupVersionKind(partialLGV)
		out.ResourceVersion, out.Continue = lm.GetResourceVersion(), lm.GetContinue()
		for _, item := range items {
			p, err := toPartial(item)
			if err != nil {
				return nil, err
			}
			out.Items = append(out.Items, *p.(*metav1.PartialObjectMetadata))
		}
		return out, nil
	}
	// Every served kind embeds ObjectMeta; GetObjectMeta reaches it (an
	// Accessor would return the object itself).
	var om *metav1.ObjectMeta
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// A custom resource: its metadata is a map, read into ObjectMeta.
		om = &metav1.ObjectMeta{}
		if raw, _ := u.Object["metadata"].(map[string]any); raw != nil {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, om); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
	} else if acc, ok := obj.(metav1.ObjectMetaAccessor); ok {
		om, _ = acc.GetObjectMeta().(*metav1.ObjectMeta)
	}
	if om == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("%T has no ObjectMeta", obj))
	}
	p := &metav1.PartialObjectMetadata{ObjectMeta: *om.DeepCopy()}
	p.SetGroupVersionKind(partialGVK)
	return p, nil
}
