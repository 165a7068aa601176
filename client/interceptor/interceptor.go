// Package interceptor wraps a client.Client so that chosen calls run a
// function of the test's instead (to inject errors, count calls, or
// change objects); the others go to the wrapped client. The fake client's
// builder takes them through WithInterceptorFuncs.
package interceptor

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/client"
)

// Funcs hold the interceptors; a nil one lets the call through. Each gets
// the wrapped client to call on when it wants the normal behaviour.
type Funcs struct {
	Get               func(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
	List              func(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) error
	Create            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.CreateOption) error
	Update            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.UpdateOption) error
	Patch             func(ctx context.Context, c client.Client, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
	Delete            func(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteOption) error
	DeleteAllOf       func(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteAllOfOption) error
	SubResourceGet    func(ctx context.Context, c client.Client, subResource string, obj, subObj client.Object, opts ...client.GetOption) error
	SubResourceCreate func(ctx context.Context, c client.Client, subResource string, obj, subObj client.Object, opts ...client.CreateOption) error
	SubResourceUpdate func(ctx context.Context, c client.Client, subResource string, obj client.Object, opts ...client.UpdateOption) error
	SubResourcePatch  func(ctx context.Context, c client.Client, subResource string, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
}

// NewClient returns c with funcs in front of it.
func NewClient(c client.Client, funcs Funcs) client.Client { return &wrapped{c: c, f: funcs} }

type wrapped struct {
	c client.Client
	f Funcs
}

func (w *wrapped) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if w.f.Get != nil {
		return w.f.Get(ctx, w.c, key, obj, opts...)
	}
	return w.c.Get(ctx, key, obj, opts...)
}

func (w *wrapped) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if w.f.List != nil {
		return w.f.List(ctx, w.c, list, opts...)
	}
	return w.c.List(ctx, list, opts...)
}

func (w *wrapped) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if w.f.Create != nil {
		return w.f.Create(ctx, w.c, obj, opts...)
	}
	return w.c.Create(ctx, obj, opts...)
}

func (w *wrapped) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if w.f.Update != nil {
		return w.f.Update(ctx, w.c, obj, opts...)
	}
	return w.c.Update(ctx, obj, opts...)
}

func (w *wrapped) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if w.f.Patch != nil {
		return w.f.Patch(ctx, w.c, obj, patch, opts...)
	}
	return w.c.Patch(ctx, obj, patch, opts...)
}

func (w *wrapped) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if w.f.Delete != nil {
		return w.f.Delete(ctx, w.c, obj, opts...)
	}
	return w.c.Delete(ctx, obj, opts...)
}

func (w *wrapped) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if w.f.DeleteAllOf != nil {
		return w.f.DeleteAllOf(ctx, w.c, obj, opts...)
	}
	return w.c.DeleteAllOf(ctx, obj, opts...)
}

func (w *wrapped) Status() client.SubResourceWriter { return w.SubResource("status") }

func (w *wrapped) SubResource(sub string) client.SubResourceClient {
	return &subClient{w: w, sub: sub, inner: w.c.SubResource(sub)}
}

func (w *wrapped) Scheme() *runtime.Scheme { return w.c.Scheme() }

func (w *wrapped) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return w.c.GroupVersionKindFor(obj)
}

func (w *wrapped) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return w.c.IsObjectNamespaced(obj)
}

type subClient struct {
	w     *wrapped
	sub   string
	inner client.SubResourceClient
}

func (s *subClient) Get(ctx context.Context, obj, subObj client.Object, opts ...client.GetOption) error {
	if s.w.f.SubResourceGet != nil {
		return s.w.f.SubResourceGet(ctx, s.w.c, s.sub, obj, subObj, opts...)
	}
	return s.inner.Get(ctx, obj, subObj, opts...)
}

func (s *subClient) Create(ctx context.Context, obj, subObj client.Object, opts ...client.CreateOption) error {
	if s.w.f.SubResourceCreate != nil {
		return s.w.f.SubResourceCreate(ctx, s.w.c, s.sub, obj, subObj, opts...)
	}
	return s.inner.Create(ctx, obj, subObj, opts...)
}

func (s *subClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if s.w.f.SubResourceUpdate != nil {
		return s.w.f.SubResourceUpdate(ctx, s.w.c, s.sub, obj, opts...)
	}
	return s.inner.Update(ctx, obj, opts...)
}

func (s *subClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if s.w.f.SubResourcePatch != nil {
		return s.w.f.SubResourcePatch(ctx, s.w.c, s.sub, obj, patch, opts...)
	}
	return s.inner.Patch(ctx, obj, patch, opts...)
}
