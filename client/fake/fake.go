package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/client/interceptor"
	"github.com/setpoint-dev/setpoint/rest"
)

// ClientBuilder builds a fake client.
type ClientBuilder struct {
	scheme   *runtime.Scheme
	objs     []client.Object
	status   []client.Object
	indexes  []index
	funcs    *interceptor.Funcs
	clusterd map[schema.GroupKind]bool
	tcs      []managedfields.TypeConverter
}

type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// NewClientBuilder returns a builder; Build without options gives an
// empty client over rest.NewScheme().
func NewClientBuilder() *ClientBuilder { return &ClientBuilder{} }

// WithScheme sets the scheme (default rest.NewScheme()).
func (b *ClientBuilder) WithScheme(s *runtime.Scheme) *ClientBuilder { b.scheme = s; return b }

// WithObjects stores objs as they are (status included), with a
// resourceVersion when they have none.
func (b *ClientBuilder) WithObjects(objs ...client.Object) *ClientBuilder {
	b.objs = append(b.objs, objs...)
	return b
}

// WithStatusSubresource gives the kinds of objs a status subresource.
func (b *ClientBuilder) WithStatusSubresource(objs ...client.Object) *ClientBuilder {
	b.status = append(b.status, objs...)
	return b
}

// WithIndex registers a field index of obj's kind for List's
// MatchingFields.
func (b *ClientBuilder) WithIndex(obj client.Object, field string, extract client.IndexerFunc) *ClientBuilder {
	b.indexes = append(b.indexes, index{obj, field, extract})
	return b
}

// WithInterceptorFuncs puts funcs in front of the client.
func (b *ClientBuilder) WithInterceptorFuncs(funcs interceptor.Funcs) *ClientBuilder {
	b.funcs = &funcs
	return b
}

// WithTypeConverters sets the type converters server-side apply and
// managed-fields tracking type objects with, tried in order (default: one
// deduced from the objects themselves, managedfields.NewDeducedTypeConverter,
// which merges maps and structs field by field but takes every list as
// atomic; give a converter of your kinds' OpenAPI schemas, e.g.
// managedfields.NewTypeConverter, for the server's list merging, with the
// deduced one last to cover the other kinds).
func (b *ClientBuilder) WithTypeConverters(tcs ...managedfields.TypeConverter) *ClientBuilder {
	b.tcs = append(b.tcs, tcs...)
	return b
}

// WithClusterScoped names kinds that live outside namespaces besides the
// built-in ones (Namespace, Node, PersistentVolume, ClusterRole, ...).
func (b *ClientBuilder) WithClusterScoped(objs ...client.Object) *ClientBuilder {
	if b.clusterd == nil {
		b.clusterd = map[schema.GroupKind]bool{}
	}
	for _, o := range objs {
		if gvk, err := client.GVKForObject(o, b.schemeOrDefault()); err == nil {
			b.clusterd[gvk.GroupKind()] = true
		}
	}
	return b
}

func (b *ClientBuilder) schemeOrDefault() *runtime.Scheme {
	if b.scheme == nil {
		s, err := rest.NewScheme()
		if err != nil {
			panic(fmt.Sprintf("fake: build the default scheme: %v", err)) // a programming error
		}
		b.scheme = s
	}
	return b.scheme
}

// Build returns the client; it panics on objects it cannot store (a test
// setup error).
func (b *ClientBuilder) Build() client.Client {
	s := b.schemeOrDefault()
	f := &fakeClient{scheme: s, objects: map[schema.GroupVersionKind]map[types.NamespacedName]map[string]any{},
		status: map[schema.GroupKind]bool{}, indexes: map[schema.GroupKind]map[string]client.IndexerFunc{},
		cluster: map[schema.GroupKind]bool{}, managers: map[managerKey]*managedfields.FieldManager{}}
	f.typeConverter = typeConverters(b.tcs)
	if len(b.tcs) == 0 {
		f.typeConverter = managedfields.NewDeducedTypeConverter()
	}
	for gk := range builtinClusterScoped {
		f.cluster[gk] = true
	}
	for gk := range b.clusterd {
		f.cluster[gk] = true
	}
	for _, o := range b.status {
		gvk, err := client.GVKForObject(o, s)
		if err != nil {
			panic(fmt.Sprintf("fake: WithStatusSubresource: %v", err))
		}
		f.status[gvk.GroupKind()] = true
	}
	for _, ix := range b.indexes {
		gvk, err := client.GVKForObject(ix.obj, s)
		if err != nil {
			panic(fmt.Sprintf("fake: WithIndex: %v", err))
		}
		if f.indexes[gvk.GroupKind()] == nil {
			f.indexes[gvk.GroupKind()] = map[string]client.IndexerFunc{}
		}
		f.indexes[gvk.GroupKind()][ix.field] = ix.extract
	}
	for _, o := range b.objs {
		if err := f.store(o.DeepCopyObject().(client.Object)); err != nil {
			panic(fmt.Sprintf("fake: WithObjects: %v", err))
		}
	}
	var c client.Client = f
	if b.funcs != nil {
		c = interceptor.NewClient(c, *b.funcs)
	}
	return c
}

var builtinClusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true, {Group: "storage.k8s.io", Kind: "StorageClass"}: true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}

// fakeClient is the tracker and the client over it. Objects are stored as
// unstructured content, by kind and key.
type fakeClient struct {
	scheme *runtime.Scheme

	mu      sync.Mutex
	rv      int64
	objects map[schema.GroupVersionKind]map[types.NamespacedName]map[string]any
	status  map[schema.GroupKind]bool
	indexes map[schema.GroupKind]map[string]client.IndexerFunc
	cluster map[schema.GroupKind]bool
	// typeConverter types objects for their managed fields; managers
	// holds the field managers built so far.
	typeConverter managedfields.TypeConverter
	managers      map[managerKey]*managedfields.FieldManager
}

func (f *fakeClient) Scheme() *runtime.Scheme { return f.scheme }

func (f *fakeClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return client.GVKForObject(obj, f.scheme)
}

func (f *fakeClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := client.GVKForObject(obj, f.scheme)
	return !f.cluster[gvk.GroupKind()], err
}

func (f *fakeClient) gr(gvk schema.GroupVersionKind) schema.GroupResource {
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}

// toMap returns obj's content.
func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return runtime.DeepCopyJSON(u.Object), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// fromMap fills obj with content m of kind gvk.
func fromMap(m map[string]any, gvk schema.GroupVersionKind, obj runtime.Object) error {
	m = runtime.DeepCopyJSON(m)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = m
		u.SetGroupVersionKind(gvk)
		return nil
	}
	reflect.ValueOf(obj).Elem().Set(reflect.Zero(reflect.TypeOf(obj).Elem()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		return fmt.Errorf("fake: decode %s: %w", gvk, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

func (f *fakeClient) nextRV() string {
	f.rv++
	return strconv.FormatInt(f.rv, 10)
}

func (f *fakeClient) key(gvk schema.GroupVersionKind, ns, name string) types.NamespacedName {
	if f.cluster[gvk.GroupKind()] {
		ns = ""
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

// store puts obj as is (WithObjects).
func (f *fakeClient) store(obj client.Object) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if obj.GetResourceVersion() == "" {
		obj.SetResourceVersion(f.nextRV())
	}
	if obj.GetUID() == "" {
		obj.SetUID(uuid.NewUUID())
	}
	m, err := toMap(obj)
	if err != nil {
		return err
	}
	f.put(gvk, f.key(gvk, obj.GetNamespace(), obj.GetName()), m)
	return nil
}

func (f *fakeClient) put(gvk schema.GroupVersionKind, k types.NamespacedName, m map[string]any) {
	if f.objects[gvk] == nil {
		f.objects[gvk] = map[types.NamespacedName]map[string]any{}
	}
	f.objects[gvk][k] = m
}

func (f *fakeClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.objects[gvk][f.key(gvk, key.Namespace, key.Name)]
	if !ok {
		return apierrors.NewNotFound(f.gr(gvk), key.Name)
	}
	return fromMap(m, gvk, obj)
}

func (f *fakeClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lgvk, err := client.GVKForObject(list, f.scheme)
	if err != nil {
		return err
	}
	gvk := lgvk.GroupVersion().WithKind(strings.TrimSuffix(lgvk.Kind, "List"))
	lo := client.ListOptionsFrom(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(f.objects[gvk]))
	for k := range f.objects[gvk] {
		if lo.Namespace == "" || k.Namespace == lo.Namespace {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var items []runtime.Object
	for _, k := range keys {
		item, err := f.item(gvk, list, f.objects[gvk][k])
		if err != nil {
			return err
		}
		ok, err := f.matches(gvk, item, lo)
		if err != nil {
			return err
		}
		if ok {
			items = append(items, item)
		}
	}
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		u.Items = nil
	}
	if err := setList(list, items); err != nil {
		return err
	}
	list.SetResourceVersion(strconv.FormatInt(f.rv, 10))
	return nil
}

// item decodes m as an item of list.
func (f *fakeClient) item(gvk schema.GroupVersionKind, list client.ObjectList, m map[string]any) (client.Object, error) {
	var obj client.Object
	switch list.(type) {
	case *unstructured.UnstructuredList:
		obj = &unstructured.Unstructured{}
	case *metav1.PartialObjectMetadataList:
		obj = &metav1.PartialObjectMetadata{}
	default:
		o, err := f.scheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("fake: list %s: %w", gvk, err)
		}
		obj = o.(client.Object)
	}
	return obj, fromMap(m, gvk, obj)
}

func (f *fakeClient) matches(gvk schema.GroupVersionKind, obj client.Object, lo client.ListOptions) (bool, error) {
	if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
		return false, nil
	}
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		return true, nil
	}
	set := fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()}
	for _, r := range lo.FieldSelector.Requirements() {
		if _, ok := set[r.Field]; ok {
			continue
		}
		fn := f.indexes[gvk.GroupKind()][r.Field]
		if fn == nil {
			return false, fmt.Errorf("fake: field selector %q: no index %q (register one with WithIndex)", lo.FieldSelector, r.Field)
		}
		typed := obj
		if _, u := obj.(*unstructured.Unstructured); u {
			o, err := f.scheme.New(gvk)
			if err != nil {
				return false, err
			}
			m, _ := toMap(obj)
			if err := fromMap(m, gvk, o); err != nil {
				return false, err
			}
			typed = o.(client.Object)
		}
		vals := fn(typed)
		found := false
		for _, v := range vals {
			if v == r.Value {
				found = true
			}
		}
		if !found {
			return false, nil
		}
	}
	var left []string
	for _, r := range lo.FieldSelector.Requirements() {
		if r.Field == "metadata.name" || r.Field == "metadata.namespace" {
			left = append(left, r.Field+string(r.Operator)+r.Value)
		}
	}
	if len(left) == 0 {
		return true, nil
	}
	sel, err := fields.ParseSelector(strings.Join(left, ","))
	if err != nil {
		return false, err
	}
	return sel.Matches(set), nil
}

func (f *fakeClient) Create(_ context.Context, obj client.Object, opts ...client.CreateOption) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	if obj.GetResourceVersion() != "" {
		return apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + utilrand.String(5))
	}
	if obj.GetName() == "" {
		return apierrors.NewInvalid(gvk.GroupKind(), "", nil)
	}
	if client.CreateOptionsFrom(opts).Raw.DryRun != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.key(gvk, obj.GetNamespace(), obj.GetName())
	if _, exists := f.objects[gvk][k]; exists {
		return apierrors.NewAlreadyExists(f.gr(gvk), obj.GetName())
	}
	obj.SetResourceVersion(f.nextRV())
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	m, err := toMap(obj)
	if err != nil {
		return err
	}
	m = f.trackUpdate(gvk, "", nil, m, client.CreateOptionsFrom(opts).Raw.FieldManager)
	f.put(gvk, k, m)
	return fromMap(m, gvk, obj)
}

func (f *fakeClient) Update(_ context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return f.write(obj, "", nil, client.UpdateOptionsFrom(opts).Raw.FieldManager)
}

func (f *fakeClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := client.PatchOptionsFrom(opts)
	if patch.Type() == types.ApplyPatchType {
		return f.apply(obj, "", patch, po)
	}
	return f.write(obj, "", patch, po.Raw.FieldManager)
}

// write stores obj, or the stored object patched, as an update of the
// main resource (sub "") or of the status subresource.
func (f *fakeClient) write(obj client.Object, sub string, patch client.Patch, manager string) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.key(gvk, obj.GetNamespace(), obj.GetName())
	old, ok := f.objects[gvk][k]
	if !ok {
		return apierrors.NewNotFound(f.gr(gvk), obj.GetName())
	}
	if sub == "status" && !f.status[gvk.GroupKind()] {
		return apierrors.NewNotFound(f.gr(gvk), obj.GetName())
	}
	var next map[string]any
	if patch != nil {
		if next, err = f.patched(gvk, old, obj, patch); err != nil {
			return err
		}
	} else if next, err = toMap(obj); err != nil {
		return err
	}
	nu := &unstructured.Unstructured{Object: next}
	ou := &unstructured.Unstructured{Object: old}
	if rv := nu.GetResourceVersion(); rv != "" && rv != ou.GetResourceVersion() {
		return apierrors.NewConflict(f.gr(gvk), obj.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	next = f.splitStatus(gvk, sub, old, next, old)
	next = f.trackUpdate(gvk, sub, old, next, manager)
	return f.commit(gvk, k, old, next, sub, obj)
}

// splitStatus returns what a write through sub stores: for the status
// subresource, old with status (and the managed fields) of next; for the
// main resource of a kind with a status subresource, next with old's
// status; else next. tracked holds the managed fields to keep.
func (f *fakeClient) splitStatus(gvk schema.GroupVersionKind, sub string, old, next, tracked map[string]any) map[string]any {
	switch {
	case sub == "status":
		st := next["status"]
		out := runtime.DeepCopyJSON(old)
		if st == nil {
			delete(out, "status")
		} else {
			out["status"] = st
		}
		ou := &unstructured.Unstructured{Object: out}
		ou.SetManagedFields((&unstructured.Unstructured{Object: tracked}).GetManagedFields())
		return out
	case f.status[gvk.GroupKind()]:
		if st, ok := old["status"]; ok {
			next["status"] = st
		} else {
			delete(next, "status")
		}
	}
	return next
}

// commit stores next as the object at k (old is the stored one, nil on
// create) with the fields the server owns set, and fills obj with it. An
// update that removes the last finalizer of a terminating object deletes
// it.
func (f *fakeClient) commit(gvk schema.GroupVersionKind, k types.NamespacedName, old, next map[string]any, sub string, obj client.Object) error {
	nu := &unstructured.Unstructured{Object: next}
	if old == nil {
		nu.SetUID(uuid.NewUUID())
		nu.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
		nu.SetGeneration(1)
		nu.SetResourceVersion(f.nextRV())
		f.put(gvk, k, next)
		return fromMap(next, gvk, obj)
	}
	ou := &unstructured.Unstructured{Object: old}
	nu.SetUID(ou.GetUID())
	nu.SetCreationTimestamp(ou.GetCreationTimestamp())
	nu.SetDeletionTimestamp(ou.GetDeletionTimestamp())
	nu.SetGeneration(ou.GetGeneration())
	if sub == "" && !reflect.DeepEqual(without(next, "metadata", "status"), without(old, "metadata", "status")) {
		nu.SetGeneration(ou.GetGeneration() + 1)
	}
	nu.SetResourceVersion(f.nextRV())
	if ou.GetDeletionTimestamp() != nil && len(nu.GetFinalizers()) == 0 {
		delete(f.objects[gvk], k)
		return fromMap(next, gvk, obj)
	}
	f.put(gvk, k, next)
	return fromMap(next, gvk, obj)
}

func without(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// patched applies patch (computed from obj) to the stored content old.
func (f *fakeClient) patched(gvk schema.GroupVersionKind, old map[string]any, obj client.Object, patch client.Patch) (map[string]any, error) {
	data, err := patch.Data(obj)
	if err != nil {
		return nil, err
	}
	orig, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch patch.Type() {
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(orig, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			out, err = p.Apply(orig)
		}
	case types.StrategicMergePatchType:
		var typed runtime.Object
		if typed, err = f.scheme.New(gvk); err == nil {
			out, err = strategicpatch.StrategicMergePatch(orig, data, typed)
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: patch type %s is not supported", patch.Type()))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("fake: apply %s patch: %v", patch.Type(), err))
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, err
	}
	// A patch without resourceVersion applies to the current object.
	if u := (&unstructured.Unstructured{Object: m}); u.GetResourceVersion() == "" {
		u.SetResourceVersion((&unstructured.Unstructured{Object: old}).GetResourceVersion())
	}
	return m, nil
}

func (f *fakeClient) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	do := client.DeleteOptionsFrom(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delete(gvk, f.key(gvk, obj.GetNamespace(), obj.GetName()), do.Raw)
}

func (f *fakeClient) delete(gvk schema.GroupVersionKind, k types.NamespacedName, do metav1.DeleteOptions) error {
	old, ok := f.objects[gvk][k]
	if !ok {
		return apierrors.NewNotFound(f.gr(gvk), k.Name)
	}
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(old)}
	if pc := do.Preconditions; pc != nil {
		if pc.UID != nil && *pc.UID != u.GetUID() || pc.ResourceVersion != nil && *pc.ResourceVersion != u.GetResourceVersion() {
			return apierrors.NewConflict(f.gr(gvk), k.Name, fmt.Errorf("precondition failed"))
		}
	}
	if do.DryRun != nil {
		return nil
	}
	if len(u.GetFinalizers()) == 0 {
		delete(f.objects[gvk], k)
		return nil
	}
	if u.GetDeletionTimestamp() == nil {
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		u.SetDeletionTimestamp(&now)
		u.SetResourceVersion(f.nextRV())
		f.put(gvk, k, u.Object)
	}
	return nil
}

func (f *fakeClient) DeleteAllOf(_ context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	gvk, err := client.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	lo, do := client.DeleteAllOfOptionsFrom(opts)
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, m := range f.objects[gvk] {
		if lo.Namespace != "" && k.Namespace != lo.Namespace {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if ok, err := f.matches(gvk, u, lo); err != nil {
			return err
		} else if !ok {
			continue
		}
		if err := f.delete(gvk, k, do.Raw); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeClient) Status() client.SubResourceWriter { return f.SubResource("status") }

func (f *fakeClient) SubResource(sub string) client.SubResourceClient {
	return &subClient{f: f, sub: sub}
}

type subClient struct {
	f   *fakeClient
	sub string
}

func (s *subClient) Get(context.Context, client.Object, client.Object, ...client.GetOption) error {
	return apierrors.NewBadRequest(fmt.Sprintf("fake: subresource %s cannot be read", s.sub))
}

func (s *subClient) Create(context.Context, client.Object, client.Object, ...client.CreateOption) error {
	return apierrors.NewBadRequest(fmt.Sprintf("fake: subresource %s cannot be created", s.sub))
}

func (s *subClient) Update(_ context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if s.sub != "status" {
		return apierrors.NewBadRequest(fmt.Sprintf("fake: subresource %s cannot be updated", s.sub))
	}
	return s.f.write(obj, "status", nil, client.UpdateOptionsFrom(opts).Raw.FieldManager)
}

func (s *subClient) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if s.sub != "status" {
		return apierrors.NewBadRequest(fmt.Sprintf("fake: subresource %s cannot be patched", s.sub))
	}
	po := client.PatchOptionsFrom(opts)
	if patch.Type() == types.ApplyPatchType {
		return s.f.apply(obj, "status", patch, po)
	}
	return s.f.write(obj, "status", patch, po.Raw.FieldManager)
}
