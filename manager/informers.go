package manager

import (
	"context"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/rest"
)

// discoveryTimeout bounds the discovery reads that map a type to a
// resource.
const discoveryTimeout = 30 * time.Second

// tracked is one informer the manager waits for. It satisfies
// controller.Source so that controller.WaitForSync can wait for it; its
// Start does nothing (the factory runs the informer).
type tracked struct {
	resource  string
	hasSynced func() bool
	lastError func() error
	// mutations checks the cache for objects modified in place.
	mutations func() error
}

func (t *tracked) Start(context.Context, string, handler.Queue) error { return nil }
func (t *tracked) HasSynced() bool                                    { return t.hasSynced() }
func (t *tracked) LastError() error                                   { return t.lastError() }
func (t *tracked) String() string                                     { return t.resource }

// MappingFor resolves the kind of obj (a typed object, or an unstructured
// one with apiVersion and kind set) to its resource and scope through
// discovery.
func (m *Manager) MappingFor(ctx context.Context, obj runtime.Object) (Mapping, error) {
	gvk, err := m.mapper.kindFor(obj)
	if err != nil {
		return Mapping{}, err
	}
	return m.mapper.mappingFor(ctx, gvk)
}

// MappingForKind resolves gvk to its resource and scope through discovery.
func (m *Manager) MappingForKind(ctx context.Context, gvk schema.GroupVersionKind) (Mapping, error) {
	return m.mapper.mappingFor(ctx, gvk)
}

// objectList is the list type of the informers and accessors the manager
// builds for a Go type T, so that callers name only T. It decodes any
// Kubernetes list whose items are T.
type objectList[T runtime.Object] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []T `json:"items"`
}

func (l *objectList[T]) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &objectList[T]{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]T, len(l.Items))
		for i, it := range l.Items {
			out.Items[i] = it.DeepCopyObject().(T)
		}
	}
	return out
}

// Informer returns the shared informer of T, whose resource is found from
// the scheme (the kind of T) and discovery (its resource name and scope).
// It is started by Start, or at once when the manager already runs, and
// Start waits for it to sync. For *unstructured.Unstructured, or a type
// the scheme does not know, use InformerFor.
func Informer[T informer.Object](m *Manager) (*informer.Informer[T], Mapping, error) {
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	zero := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	mp, err := m.MappingFor(ctx, zero)
	if err != nil {
		return nil, Mapping{}, fmt.Errorf("informer for %T: %w", zero, err)
	}
	return InformerFor[T](m, mp.GVR, mp.Namespaced), mp, nil
}

// InformerFor returns the shared informer of T over gvr, without
// discovery: namespaced says whether the resource lives in namespaces.
// T may be *unstructured.Unstructured.
func InformerFor[T informer.Object](m *Manager, gvr schema.GroupVersionResource, namespaced bool) *informer.Informer[T] {
	var inf *informer.Informer[T]
	if _, dyn := any(*new(T)).(*unstructured.Unstructured); dyn {
		inf = any(informer.Dynamic(m.factory, gvr, namespaced)).(*informer.Informer[T])
	} else {
		inf = informer.For[T, *objectList[T]](m.factory, gvr, namespaced)
	}
	key := fmt.Sprintf("%s|%s", reflect.TypeFor[T](), gvr)
	m.mu.Lock()
	if _, ok := m.informers[key]; !ok {
		m.informers[key] = &tracked{resource: describe(gvr), hasSynced: inf.HasSynced, lastError: inf.LastError,
			mutations: inf.Indexer().CheckMutations}
	}
	infCtx := m.infCtx
	m.mu.Unlock()
	if infCtx != nil {
		m.factory.Start(infCtx)
	}
	return inf
}

// Resource returns the typed accessor of T's resource (found like
// Informer does), with L its list type, e.g.
// Resource[*corev1.Secret, *corev1.SecretList](m). The manager's client
// encodes with the manager's scheme, so your own types for custom
// resources need no TypeMeta set.
//
// Deprecated: use the manager's Client (GetClient), which reads from the
// cache and writes to the server for every type of the scheme.
func Resource[T, L runtime.Object](m *Manager) (*rest.Resource[T, L], error) {
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	zero := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	mp, err := m.MappingFor(ctx, zero)
	if err != nil {
		return nil, fmt.Errorf("resource for %T: %w", zero, err)
	}
	return rest.For[T, L](m.client, mp.GVR, mp.Namespaced), nil
}

// trackedInformers returns the informers to wait for.
func (m *Manager) trackedInformers() []*tracked {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*tracked, 0, len(m.informers))
	for _, t := range m.informers {
		out = append(out, t)
	}
	return out
}

// KindFor returns the GroupVersionKind of obj: from the scheme for typed
// objects, from apiVersion and kind for unstructured ones.
func (m *Manager) KindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return m.mapper.kindFor(obj)
}
