package customresource

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/crdschema"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// schemaRefPrefix is where published OpenAPI v3 models live.
const schemaRefPrefix = "#/components/schemas/"

// Resources returns the descriptors of crd's served versions, in the
// order of spec.versions. conv converts objects between versions when the
// CRD's conversion strategy is Webhook (it is required then, and ignored
// otherwise). It fails when a version's schema does not compile or its
// printer columns are invalid (the CRD's validation normally refused such
// a CRD already).
func Resources(crd *apiextv1.CustomResourceDefinition, conv registry.VersionConverter) ([]*registry.Resource, error) {
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	if !Webhook(crd) {
		conv = nil
	} else if conv == nil {
		return nil, fmt.Errorf("customresource %s: conversion strategy Webhook needs a converter", crd.Name)
	}
	var out []*registry.Resource
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		r, err := versionResource(crd, v, storage, field.NewPath("spec", "versions").Index(i))
		if err != nil {
			return nil, fmt.Errorf("customresource %s version %s: %w", crd.Name, v.Name, err)
		}
		r.Converter = conv
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("customresource %s: no served version", crd.Name)
	}
	return out, nil
}

func versionResource(crd *apiextv1.CustomResourceDefinition, v *apiextv1.CustomResourceDefinitionVersion,
	storage string, fldPath *field.Path) (*registry.Resource, error) {
	var props *apiextv1.JSONSchemaProps
	if v.Schema != nil {
		props = v.Schema.OpenAPIV3Schema
	}
	if props == nil {
		props = &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}
	}
	sch, errs := crdschema.CompileAccepted(props, fldPath.Child("schema", "openAPIV3Schema"))
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	cols, err := crdschema.NewColumns(v.AdditionalPrinterColumns)
	if err != nil {
		return nil, err
	}
	names := crd.Spec.Names
	namespaced := crd.Spec.Scope == apiextv1.NamespaceScoped
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind}
	st := &strategy{schema: sch, namespaced: namespaced, kind: gvk}
	r := &registry.Resource{
		Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural,
		Kind: names.Kind, ListKind: names.ListKind, Singular: names.Singular,
		ShortNames: slices.Clone(names.ShortNames), Categories: slices.Clone(names.Categories),
		Namespaced:     namespaced,
		New:            func() runtime.Object { return &unstructured.Unstructured{Object: map[string]any{}} },
		NewList:        func() runtime.Object { return &unstructured.UnstructuredList{Object: map[string]any{}} },
		Unstructured:   true,
		Schema:         sch.OpenAPI(schemaRefPrefix),
		ModelName:      modelName(crd.Spec.Group, v.Name, names.Kind),
		StorageVersion: storage,
		Strategy:       st,
		Attrs:          attrs(namespaced, v.SelectableFields),
		Table:          table{cols},
	}
	if sub := v.Subresources; sub != nil {
		if sub.Status != nil {
			st.status = true
			r.Status = statusStrategy{st}
		}
		if sub.Scale != nil {
			r.Scale = newScale(crd, sub.Scale)
		}
	}
	return r, nil
}

// modelName is the OpenAPI model of a custom kind as Kubernetes names it:
// the group's labels reversed, then version and kind
// (stable.example.com, v1, CronTab → com.example.stable.v1.CronTab).
func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(append(parts, version, kind), ".")
}

// Webhook reports whether crd's objects are converted by a conversion
// webhook.
func Webhook(crd *apiextv1.CustomResourceDefinition) bool {
	c := crd.Spec.Conversion
	return c != nil && c.Strategy == apiextv1.WebhookConverter
}

func ptrTrue() *bool { t := true; return &t }

// attrs returns the labels and selectable fields of a custom object:
// metadata.name, metadata.namespace (namespaced kinds) and the version's
// selectableFields, each the string form of the value at its path ("" when
// absent, as Kubernetes).
func attrs(namespaced bool, selectable []apiextv1.SelectableField) registry.AttrFunc {
	paths := make([][]string, len(selectable))
	for i, f := range selectable {
		paths[i] = strings.Split(strings.TrimPrefix(f.JSONPath, "."), ".")
	}
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil, fmt.Errorf("customresource: %T is not unstructured", obj)
		}
		fs := fields.Set{"metadata.name": u.GetName()}
		if namespaced {
			fs["metadata.namespace"] = u.GetNamespace()
		}
		for _, p := range paths {
			v, found, _ := unstructured.NestedFieldNoCopy(u.Object, p...)
			s := ""
			if found && v != nil {
				s = fmt.Sprint(v)
			}
			fs[strings.Join(p, ".")] = s
		}
		return labels.Set(u.GetLabels()), fs, nil
	}
}

// table renders rows with the version's printer columns.
type table struct{ cols *crdschema.Columns }

func (t table) Columns() []metav1.TableColumnDefinition { return t.cols.Definitions() }

func (t table) Cells(obj runtime.Object) ([]any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("customresource: %T is not unstructured", obj)
	}
	return t.cols.Cells(u.Object, time.Now()), nil
}
