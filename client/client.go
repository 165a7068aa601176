package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/rest"
)

// Options configure New.
type Options struct {
	// REST reaches the server; its scheme is the client's. Without it,
	// New builds one from Config and Scheme.
	REST *rest.Client
	// Config reaches the server when REST is nil, with Scheme (nil:
	// rest.NewScheme(), every built-in kind; add your own types to a
	// scheme of yours with their AddToScheme).
	Config *rest.Config
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources; nil: NewDiscoveryRESTMapper over
	// the client's rest client.
	Mapper RESTMapper
	// Cache answers Get and List; nil sends them to the server.
	Cache Reader
}

// New returns a client writing through opts.REST (or a rest client of
// opts.Config) and reading from opts.Cache (or the server). Without a
// cache it is controller-runtime's client.New(cfg, client.Options{Scheme:
// s}): every call is a request, as tests and tools want.
func New(opts Options) (Client, error) {
	if opts.REST == nil {
		if opts.Config == nil {
			return nil, errors.New("client: Options.REST or Options.Config is required")
		}
		r, err := rest.NewWithScheme(opts.Config, opts.Scheme)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		opts.REST = r
	}
	if opts.Mapper == nil {
		opts.Mapper = NewDiscoveryRESTMapper(opts.REST)
	}
	c := &client{rest: opts.REST, scheme: opts.REST.Scheme(), mapper: opts.Mapper}
	c.reader = opts.Cache
	if c.reader == nil {
		c.reader = directReader{c}
	}
	return c, nil
}

// NewAPIReader returns a Reader that reads from the server, not a cache
// (for reads that must see the newest state, or kinds not worth caching).
func NewAPIReader(r *rest.Client, m RESTMapper) Reader {
	return directReader{&client{rest: r, scheme: r.Scheme(), mapper: m}}
}

type client struct {
	rest   *rest.Client
	scheme *runtime.Scheme
	mapper RESTMapper
	reader Reader
}

type accessor = rest.Resource[runtime.Object, runtime.Object]

func (c *client) Scheme() *runtime.Scheme { return c.scheme }

func (c *client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return GVKForObject(obj, c.scheme)
}

func (c *client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := GVKForObject(obj, c.scheme)
	if err != nil {
		return false, err
	}
	m, err := c.mapper.RESTMapping(context.Background(), gvk)
	return m.Namespaced, err
}

// resource returns the accessor of obj's kind, bound to namespace ns.
// Answers are decoded into fresh objects of obj's type (unstructured for
// metadata-only objects).
func (c *client) resource(ctx context.Context, obj runtime.Object, ns string) (*accessor, error) {
	gvk, err := GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, err
	}
	return c.resourceForKind(ctx, gvk, obj, ns)
}

func (c *client) resourceForKind(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object, ns string) (*accessor, error) {
	m, err := c.mapper.RESTMapping(ctx, gvk)
	if err != nil {
		return nil, err
	}
	proto := obj
	if isMetadataOnly(obj) {
		proto = &unstructured.Unstructured{}
	}
	newObj := func() runtime.Object { return newLike(proto) }
	newList := func() runtime.Object { return &unstructured.UnstructuredList{} }
	if _, ok := proto.(*unstructured.Unstructured); !ok {
		lgvk := gvk.GroupVersion().WithKind(gvk.Kind + "List")
		if l, err := c.scheme.New(lgvk); err == nil {
			newList = newListOf(l)
		}
	}
	return rest.ForNew(c.rest, m.GVR, m.Namespaced, newObj, newList).Namespace(ns), nil
}

// fill makes obj hold out, the server's answer.
func fill(obj Object, out runtime.Object) error {
	if pom, ok := obj.(*metav1.PartialObjectMetadata); ok {
		u, ok := out.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("fill %T with a %T", obj, out)
		}
		*pom = metav1.PartialObjectMetadata{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pom); err != nil {
			return fmt.Errorf("metadata of %s: %w", u.GroupVersionKind(), err)
		}
		return nil
	}
	return assign(obj, out)
}

func (c *client) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c *client) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

func (c *client) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	if isMetadataOnly(obj) {
		return errors.New("client: cannot create a metadata-only object")
	}
	res, err := c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	o := CreateOptionsFrom(opts)
	out, err := res.Create(ctx, obj, o.Raw)
	if err != nil {
		return err
	}
	return fill(obj, out)
}

func (c *client) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return c.update(ctx, obj, "", opts)
}

func (c *client) update(ctx context.Context, obj Object, sub string, opts []UpdateOption) error {
	if isMetadataOnly(obj) {
		return errors.New("client: cannot update a metadata-only object (patch it)")
	}
	res, err := c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	o := UpdateOptionsFrom(opts)
	if o.SubResourceBody != nil {
		return res.DoSubresource(ctx, http.MethodPut, obj.GetName(), sub, &o.Raw, o.SubResourceBody, o.SubResourceBody)
	}
	var out runtime.Object
	if sub == "" {
		out, err = res.Update(ctx, obj, o.Raw)
	} else {
		out, err = res.UpdateSubresource(ctx, obj, sub, o.Raw)
	}
	if err != nil {
		return err
	}
	return fill(obj, out)
}

func (c *client) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return c.patch(ctx, obj, patch, "", opts)
}

func (c *client) patch(ctx context.Context, obj Object, patch Patch, sub string, opts []PatchOption) error {
	res, err := c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	src := obj
	if patch.Type() == types.ApplyPatchType && obj.GetObjectKind().GroupVersionKind().Empty() {
		gvk, err := GVKForObject(obj, c.scheme)
		if err != nil {
			return err
		}
		src = obj.DeepCopyObject().(Object)
		src.GetObjectKind().SetGroupVersionKind(gvk)
	}
	data, err := patch.Data(src)
	if err != nil {
		return fmt.Errorf("client: patch %s: %w", obj.GetName(), err)
	}
	o := PatchOptionsFrom(opts)
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	out, err := res.Patch(ctx, obj.GetName(), patch.Type(), data, o.Raw, subs...)
	if err != nil {
		return err
	}
	if o.SubResourceBody != nil {
		return fill(o.SubResourceBody, out)
	}
	return fill(obj, out)
}

func (c *client) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	res, err := c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	return res.Delete(ctx, obj.GetName(), DeleteOptionsFrom(opts).Raw)
}

func (c *client) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	lo, do := DeleteAllOfOptionsFrom(opts)
	res, err := c.resource(ctx, obj, lo.Namespace)
	if err != nil {
		return err
	}
	return res.DeleteCollection(ctx, do.Raw, rawListOptions(lo))
}

func rawListOptions(lo ListOptions) metav1.ListOptions {
	var raw metav1.ListOptions
	if lo.LabelSelector != nil {
		raw.LabelSelector = lo.LabelSelector.String()
	}
	if lo.FieldSelector != nil {
		raw.FieldSelector = lo.FieldSelector.String()
	}
	return raw
}

func (c *client) Status() SubResourceWriter { return c.SubResource("status") }

func (c *client) SubResource(sub string) SubResourceClient { return &subClient{c: c, sub: sub} }

type subClient struct {
	c   *client
	sub string
}

func (s *subClient) Get(ctx context.Context, obj Object, subResource Object, opts ...GetOption) error {
	res, err := s.c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	return res.DoSubresource(ctx, http.MethodGet, obj.GetName(), s.sub, &metav1.GetOptions{}, nil, subResource)
}

func (s *subClient) Create(ctx context.Context, obj Object, subResource Object, opts ...CreateOption) error {
	res, err := s.c.resource(ctx, obj, obj.GetNamespace())
	if err != nil {
		return err
	}
	o := CreateOptionsFrom(opts)
	return res.DoSubresource(ctx, http.MethodPost, obj.GetName(), s.sub, &o.Raw, subResource, subResource)
}

func (s *subClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return s.c.update(ctx, obj, s.sub, opts)
}

func (s *subClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return s.c.patch(ctx, obj, patch, s.sub, opts)
}

// directReader reads from the server.
type directReader struct{ c *client }

func (d directReader) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	res, err := d.c.resource(ctx, obj, key.Namespace)
	if err != nil {
		return err
	}
	if isMetadataOnly(obj) {
		res = res.MetadataOnly()
	}
	out, err := res.Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return fill(obj, out)
}

func (d directReader) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	typ, gvk, err := itemType(list, d.c.scheme)
	if err != nil {
		return err
	}
	lo := ListOptionsFrom(opts)
	proto := newLike(list)
	item := reflect.New(typ.Elem()).Interface().(runtime.Object)
	if u, ok := item.(*unstructured.Unstructured); ok {
		u.SetGroupVersionKind(gvk)
	}
	m, err := d.c.mapper.RESTMapping(ctx, gvk)
	if err != nil {
		return err
	}
	res := rest.ForNew(d.c.rest, m.GVR, m.Namespaced, func() runtime.Object { return newLike(item) },
		func() runtime.Object { return newLike(proto) }).Namespace(lo.Namespace)
	if _, ok := list.(*metav1.PartialObjectMetadataList); ok {
		res = res.MetadataOnly()
	}
	out, err := res.List(ctx, rawListOptions(lo))
	if err != nil {
		return err
	}
	return assign(list, out)
}
