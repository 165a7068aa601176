package fieldmanager

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TypeConverter converts objects to structured-merge-diff typed values.
type TypeConverter = managedfields.TypeConverter

// NewTypeConverter builds the type converter of every kind from OpenAPI v3
// definitions keyed by model name (refs "#/components/schemas/<name>"),
// such as internal/openapi's Service.Schemas.
func NewTypeConverter(schemas map[string]*spec.Schema) (TypeConverter, error) {
	tc, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: type converter: %w", err)
	}
	return tc, nil
}

// Resource tracks the managed fields of one served resource.
type Resource struct {
	res      *registry.Resource
	gvk      schema.GroupVersionKind
	scheme   *runtime.Scheme
	managers map[string]*managedfields.FieldManager // by subresource ("" is the main resource)
	tc       TypeConverter
	// scale tracks writes through the scale subresource (nil without
	// one), on the Scale objects; replicasPaths maps the resource's
	// versions to their replicas path (scale.go).
	scale         *managedfields.FieldManager
	replicasPaths managedfields.ResourcePathMappings
}

// TypeConverter is the type converter the resource's objects are typed
// with (the MutatingAdmissionPolicy applies its ApplyConfigurations with it).
func (r *Resource) TypeConverter() TypeConverter { return r.tc }

// defaulter adapts a strategy's Default to runtime.ObjectDefaulter: apply
// results are defaulted as decoded objects are.
type defaulter struct{ s registry.Strategy }

func (d defaulter) Default(obj runtime.Object) { d.s.Default(obj) }

// New builds the field managers of res. scheme must know res's kind (it
// creates and converts its objects), unless res is Unstructured (a custom
// resource, whose versions differ only in apiVersion).
func New(tc TypeConverter, scheme *runtime.Scheme, res *registry.Resource) (*Resource, error) {
	r := &Resource{res: res, gvk: res.GVK(), scheme: scheme, managers: map[string]*managedfields.FieldManager{}, tc: tc}
	version := fieldpath.APIVersion(r.gvk.GroupVersion().String())
	subresources := map[string]*fieldpath.Set{"": nil}
	if res.Status != nil {
		subresources[""] = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
		subresources["status"] = fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"),
			fieldpath.MakePathOrDie("metadata", "ownerReferences"),
		)
	}
	if len(res.ResetFields) > 0 {
		subresources[""] = pathSet(res.ResetFields)
	}
	for _, sr := range res.Subresources {
		if sr.Update == nil {
			continue
		}
		subresources[sr.Name] = pathSet(sr.ResetFields)
	}
	for sub, reset := range subresources {
		var filters map[fieldpath.APIVersion]fieldpath.Filter
		if reset != nil {
			filters = map[fieldpath.APIVersion]fieldpath.Filter{version: fieldpath.NewExcludeSetFilter(reset)}
		}
		var conv runtime.ObjectConvertor = scheme
		var creater runtime.ObjectCreater = scheme
		if res.Unstructured {
			conv, creater = unstructuredConvertor{}, unstructuredCreater{}
		}
		fm, err := managedfields.NewDefaultFieldManager(tc, conv, defaulter{res.Strategy}, creater,
			r.gvk, r.gvk.GroupVersion(), sub, filters)
		if err != nil {
			return nil, fmt.Errorf("fieldmanager: %s %q: %w", r.gvk, sub, err)
		}
		r.managers[sub] = fm
	}
	if res.Scale != nil {
		fm, err := newScaleManager(tc, scheme)
		if err != nil {
			return nil, err
		}
		r.scale, r.replicasPaths = fm, replicasPaths(res)
	}
	return r, nil
}

func (r *Resource) manager(subresource string) (*managedfields.FieldManager, error) {
	fm, ok := r.managers[subresource]
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("fieldmanager: %s has no subresource %q", r.gvk, subresource))
	}
	return fm, nil
}

func (r *Resource) empty() runtime.Object {
	obj := r.res.New()
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	return obj
}

// Update records in obj's managedFields what manager changed from live
// (nil: obj is being created) with an Update operation through subresource.
// obj may be modified and is returned; if tracking fails, obj keeps live's
// entries, as Kubernetes does. Tracking fails, in practice, only for an
// object that does not fit its schema (a string where a custom resource's
// schema wants an integer), which validation then refuses with 422; unlike
// apimachinery's UpdateNoErrors this logs nothing for it.
func (r *Resource) Update(live, obj runtime.Object, manager, subresource string) runtime.Object {
	fm, err := r.manager(subresource)
	if err != nil {
		return obj
	}
	if live == nil {
		live = r.empty()
	}
	obj.GetObjectKind().SetGroupVersionKind(r.gvk)
	if rl, ro, ok := r.reduced(live, obj); ok {
		out, err := fm.Update(rl, ro, manager)
		if err == nil {
			setManagedFields(obj, out)
			return obj
		}
	} else if out, err := fm.Update(live, obj, manager); err == nil {
		return out
	}
	if l, lerr := meta.Accessor(live); lerr == nil {
		if o, oerr := meta.Accessor(obj); oerr == nil {
			o.SetManagedFields(l.GetManagedFields())
		}
	}
	return obj
}

// setManagedFields gives obj the managedFields tracking wrote into from
// (a reduced copy of obj).
func setManagedFields(obj, from runtime.Object) {
	o, oerr := meta.Accessor(obj)
	f, ferr := meta.Accessor(from)
	if oerr == nil && ferr == nil {
		o.SetManagedFields(f.GetManagedFields())
	}
}

// Apply merges the apply configuration patch (YAML or JSON) into live
// (nil: the object does not exist yet) for manager, through subresource.
// Without force, fields another manager owns with a different value are a
// 409 Conflict whose causes name them. strict reports duplicate fields in
// the configuration as a 400; otherwise they are returned as warnings.
func (r *Resource) Apply(live runtime.Object, patch []byte, manager, subresource string, force, strict bool) (runtime.Object, []string, error) {
	fm, err := r.manager(subresource)
	if err != nil {
		return nil, nil, err
	}
	cfg := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := yaml.Unmarshal(patch, &cfg.Object); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if live == nil {
		live = r.empty()
	}
	out, err := fm.Apply(live, cfg, manager, force)
	if err != nil {
		return nil, nil, applyError(err)
	}
	var warnings []string
	if err := yaml.UnmarshalStrict(patch, &map[string]interface{}{}); err != nil {
		if strict {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
		}
		warnings = append(warnings, err.Error())
	}
	if _, ok := out.(*unstructured.Unstructured); ok && !r.res.Unstructured {
		typed := r.res.New()
		if err := r.scheme.Convert(out, typed, nil); err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
		out = typed
	}
	out.GetObjectKind().SetGroupVersionKind(r.gvk)
	return out, warnings, nil
}

// FieldManagerMaxLength is the longest manager name Kubernetes accepts.
var FieldManagerMaxLength = metavalidation.FieldManagerMaxLength

// ManagerName is the manager of a non-apply write: the fieldManager
// parameter, or else the user agent up to its first "/", without
// unprintable characters and cut at FieldManagerMaxLength bytes.
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if buf.Len()+utf8.RuneLen(c) > FieldManagerMaxLength {
			break
		}
		buf.WriteRune(c)
	}
	return buf.String()
}

// applyError makes an apply configuration that does not fit the schema (a
// string where an integer belongs, a field the schema does not declare) a
// 400 naming the field; apimachinery reports it as a plain error, which
// kube-apiserver answers with 500 (kubernetes/kubernetes#139253). Other
// errors pass unchanged.
func applyError(err error) error {
	var api apierrors.APIStatus
	if !errors.As(err, &api) && strings.HasPrefix(err.Error(), "failed to create typed patch object") {
		return apierrors.NewBadRequest(err.Error())
	}
	return err
}

// pathSet is the set of the field paths ps.
func pathSet(ps [][]string) *fieldpath.Set {
	set := fieldpath.NewSet()
	for _, p := range ps {
		elems := make([]interface{}, len(p))
		for i, e := range p {
			elems[i] = e
		}
		set.Insert(fieldpath.MakePathOrDie(elems...))
	}
	return set
}
