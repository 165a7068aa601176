package registry

import (
	"context"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/clock"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// The hooks of this file are how a kind does what its strategy cannot: they
// run inside a request, may read and write other resources through Env, and
// may fail with an API error (an *apierrors.StatusError), which the server
// sends to the client as is. Like strategies they keep no state of their own:
// whatever must outlive a request lives in storage.

// Env is what hooks may use of the server they run in.
type Env interface {
	// Objects returns the objects of a served resource, nil when gvr is not
	// served.
	Objects(gvr schema.GroupVersionResource) Objects
	// Storage is the server's store, for state that is not an API object
	// (the allocation claims of service IPs and node ports).
	Storage() storage.Store
	// Clock is the server's clock.
	Clock() clock.PassiveClock
	// NodeTransport reaches the HTTPS endpoints of nodes (their kubelets)
	// with the API server's client certificate.
	NodeTransport() http.RoundTripper
	// ServiceAccountTokens issues the server's service-account tokens.
	ServiceAccountTokens() TokenIssuer
	// TokenAuthenticator authenticates bearer tokens as the server does
	// (TokenReview).
	TokenAuthenticator
	// Authorizer is the server's authorization decision (the access
	// reviews, the certificate approval and signing checks, the escalate
	// and bind checks of RBAC objects): the one the server authorizes
	// every request with; see package authorizer.
	Authorizer() authorizer.Authorizer
}

// TokenIssuer issues service-account tokens (serviceaccount.Issuer).
type TokenIssuer interface {
	// Audiences are the API server's own audiences, the default of a
	// token request.
	Audiences() []string
	// Issue signs a token for claims, valid from now for ttl.
	Issue(c serviceaccount.Claims, audiences []string, now time.Time, ttl time.Duration) (string, time.Time, error)
}

// TokenAuthenticator authenticates bearer tokens.
type TokenAuthenticator interface {
	// AuthenticateToken returns the user token authenticates as for
	// audiences (the API server's when empty) and the audiences of those
	// it is valid for; an error, worded as kube-apiserver's TokenReview
	// reports it, when the token does not authenticate.
	AuthenticateToken(ctx context.Context, token string, audiences []string) (UserInfo, []string, error)
}

// Objects reads and writes the objects of one resource through its object
// layer, as a request to the server would, but without admission of the
// caller's kind: hooks use it for the objects their kind affects (an
// eviction deletes a pod and updates a disruption budget).
type Objects interface {
	// Get is a consistent read of one object.
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
	// List is a consistent read of the objects matching the selectors (nil
	// selects everything), namespace "" meaning all: every write
	// acknowledged before the call is seen. Objects are shared: copy before
	// modifying.
	List(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error)
	// Create stores a new object.
	Create(ctx context.Context, namespace string, obj runtime.Object, dryRun bool) (runtime.Object, error)
	// Update reads the object, applies fn to a copy and writes the result;
	// a lost compare-and-swap race calls fn again on the newer object
	// unless the object fn returns names a resourceVersion.
	Update(ctx context.Context, namespace, name string, fn func(current runtime.Object) (runtime.Object, error), dryRun bool) (runtime.Object, error)
	// Mutate changes the stored object in place with fn, bypassing the
	// kind's strategy: a system write that no client update could make (a
	// binding sets spec.nodeName). fn gets a copy; it is called again on a
	// newer object when a concurrent write intervenes.
	Mutate(ctx context.Context, namespace, name string, fn func(obj runtime.Object) error, dryRun bool) (runtime.Object, error)
	// Delete deletes (or starts deleting) an object; gone reports whether
	// it was removed from storage.
	Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (obj runtime.Object, gone bool, err error)
}

// CachedLister is what the server's Objects also offer: a read of the watch
// cache as it is, possibly behind storage, for admission that
// kube-apiserver runs on informers and that must not wait on every write.
type CachedLister interface {
	ListCached(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error)
	// ListRecent is List (a consistent read) when the watch cache catches
	// up with storage within its progress timeout, and the cache as it is
	// when it does not: a write's admission (LimitRanger, ResourceQuota)
	// sees what was written before it, and under a write storm it is not
	// refused because a cache lags, as kube-apiserver's informer-fed
	// admission is not.
	ListRecent(ctx context.Context, namespace string, label labels.Selector, field fields.Selector) ([]runtime.Object, error)
}

// GetCached reads one object for admission as kube-apiserver's plugins read
// their informers: from the watch cache when the server offers it
// (CachedGetter), and from storage when the cache does not hold it (yet):
// an object created a moment ago is found.
func GetCached(ctx context.Context, objs Objects, namespace, name string) (runtime.Object, error) {
	if cg, ok := objs.(CachedGetter); ok {
		if obj, found, err := cg.GetCached(namespace, name); err == nil && found {
			return obj, nil
		}
	}
	return objs.Get(ctx, namespace, name)
}

// KindResolver is what the server's Env also offers: the served, stored
// resource of a kind (nil when none), as a REST mapping finds it; the
// admission policies read their params' kind through it.
type KindResolver interface {
	ResourceForKind(gvk schema.GroupVersionKind) *Resource
}

// TypeConverterSource is what the server's Env also offers: the
// structured-merge-diff type converter of a served resource's objects (nil
// when it has none), from the OpenAPI schemas the server publishes.
type TypeConverterSource interface {
	TypeConverterFor(gvr schema.GroupVersionResource) managedfields.TypeConverter
}

// CachedGetter is what the server's Objects also offer: one object of the
// watch cache as it is (found false when the cache does not hold it).
type CachedGetter interface {
	GetCached(namespace, name string) (obj runtime.Object, found bool, err error)
}

// ListRecent lists the objects of namespace for admission: through
// CachedLister.ListRecent when objs offers it, else List.
func ListRecent(ctx context.Context, objs Objects, namespace string) ([]runtime.Object, error) {
	if cl, ok := objs.(CachedLister); ok {
		return cl.ListRecent(ctx, namespace, nil, nil)
	}
	return objs.List(ctx, namespace, nil, nil)
}

// UserInfo is the authenticated user a request runs as.
type UserInfo struct {
	Name, UID string
	Groups    []string
	Extra     map[string][]string
}

// AuthorizerUser returns u as package authorizer describes users.
func (u UserInfo) AuthorizerUser() authorizer.User {
	return authorizer.User{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

type userKey struct{}

// WithUser returns ctx carrying the user a request runs as (set by the
// server's authentication).
func WithUser(ctx context.Context, u UserInfo) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx carries (the zero UserInfo when none).
func UserFrom(ctx context.Context) UserInfo {
	u, _ := ctx.Value(userKey{}).(UserInfo)
	return u
}

// Request is what a hook knows of the request it serves.
type Request struct {
	// Namespace and Name of the object the request addresses ("" for
	// collections and cluster-scoped kinds).
	Namespace, Name string
	User            UserInfo
	// DryRun requests that nothing be persisted.
	DryRun bool
	// Query is the request's query string.
	Query url.Values
	// Subpath is what follows the subresource in the path of a connect
	// request (proxy: /api/v1/namespaces/ns/pods/p/proxy/<subpath>).
	Subpath string
}

// Operation names what an admission sees happen.
type Operation string

const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Attributes describe one write to admission.
type Attributes struct {
	Operation Operation
	// Resource is the resource written (its GVR, GVK and scope); nil only
	// where a caller builds Attributes by hand for a kind's own hook.
	Resource *Resource
	// Subresource is "" for the main resource.
	Subresource string
	// GeneratedName is set in the mutating admission of a create whose
	// name the server generated from metadata.generateName for this
	// attempt: kube-apiserver generates it after its mutating admission,
	// whose refusals name the object by its generateName.
	GeneratedName bool
	// Object is the object being written (nil on delete); Old is the
	// current object (nil on create). Admission may change Object.
	Object, Old runtime.Object
	Request
}

// Txn is what an admission took for a write that is not yet stored (a
// claimed IP address): Commit runs once the write is stored, Revert when it
// is not (it failed, was a dry run, or lost a race and is tried again).
// Either may be nil.
type Txn struct {
	Commit, Revert func()
}

// Finish runs Commit when stored, else Revert.
func (t *Txn) Finish(stored bool) {
	switch {
	case t == nil:
	case stored && t.Commit != nil:
		t.Commit()
	case !stored && t.Revert != nil:
		t.Revert()
	}
}

// AdmitFunc is a kind's own admission. It runs on every create and update
// of the main resource and of the subresources it names, after defaulting
// and PrepareForUpdate, before PrepareForCreate and validation, inside the
// server's compare-and-swap retries (once per attempt). It may complete the
// object (allocate a cluster IP) and must return a Txn that gives back what
// it took if the write does not happen. On update it sees Old.
type AdmitFunc func(ctx context.Context, env Env, a *Attributes) (*Txn, error)

// A kind's AdmitValidate is an AdmitFunc too, run where kube-apiserver runs
// its validating admission plugins: on creates and updates (main resource
// and subresources), after the strategy's validation and before the
// write, once per attempt; it checks and may take what it needs (a quota
// charge) but does not change the object.

// AfterDeleteFunc runs after an object was removed from storage, to release
// what admission allocated for it.
type AfterDeleteFunc func(ctx context.Context, env Env, obj runtime.Object)

// Subresource is a subresource a kind serves besides status and scale. It
// is one of three forms, named by which of Update, Action and Connect is set.
type Subresource struct {
	// Name is the path segment after the object's name ("binding", "log").
	Name string
	// Kind is the kind discovery lists for the subresource (v1 Binding,
	// policy/v1 Eviction, v1 Pod for ephemeralcontainers).
	Kind schema.GroupVersionKind
	// Verbs are the verbs discovery lists.
	Verbs []string

	// Update: the subresource is a view of the parent object, read and
	// written (get, update, patch) through this strategy, which keeps all
	// but what the subresource may change (namespaces/finalize,
	// pods/ephemeralcontainers, pods/resize,
	// certificatesigningrequests/approval).
	Update StatusStrategy
	// ResetFields are the field paths (["status"], ["spec", "x"]) an
	// Update subresource never writes: server-side apply through it does
	// not take their ownership.
	ResetFields [][]string
	// Action: a POST whose body acts on the parent (pods/binding,
	// pods/eviction, serviceaccounts/token).
	Action *Action
	// Connect: the request is forwarded to where the kind says
	// (pods/log, exec, attach, portforward, proxy; nodes/proxy,
	// services/proxy).
	Connect *Connect
}

// Action is a subresource that takes a body and answers with an object.
type Action struct {
	// NewBody returns an empty request body of the Go type the action
	// takes (registered in the server's scheme).
	NewBody func() runtime.Object
	// Accepts lists further versions of the body the action takes
	// (policy/v1beta1 Eviction besides policy/v1): Do then gets the body
	// decoded as that version's Go type.
	Accepts []schema.GroupVersionKind
	// Do performs the action on the parent named by req and returns the
	// object to answer with (201 Created), or an API error.
	Do func(ctx context.Context, env Env, req Request, body runtime.Object) (runtime.Object, error)
}

// Connect is a subresource whose requests the server forwards to a location
// the kind resolves: a node's kubelet endpoint, a pod or service address.
// The server answers as kube-apiserver does: a location error is sent as
// is; a backend that cannot be reached is a 500 (Stream: the client's
// error; upgrades: "error dialing backend: …") or a 503 "error trying to
// reach service: …" (proxies); an upgrade the backend refuses with a 4xx
// or 5xx reaches the client unchanged.
type Connect struct {
	// Methods are the HTTP methods accepted (others get 405).
	Methods []string
	// NewOptions returns an empty object of the subresource's options type
	// (PodLogOptions, PodExecOptions, …), which the server fills from the
	// query parameters by their JSON names (a malformed value is a 400);
	// nil takes no options.
	NewOptions func() runtime.Object
	// Location says where the request goes: the URL (its path complete;
	// its query too, except for proxies, whose query is the client's) and
	// the transport that reaches it. A nil Location without error answers
	// 204 No Content (the log of a pod not yet on a node).
	Location func(ctx context.Context, env Env, req Request, opts runtime.Object) (*Location, error)
	// Stream: the server GETs the location itself and streams the body
	// back as text/plain (pods/log), instead of forwarding the request; a
	// backend answer outside 2xx becomes an API error of its code.
	Stream bool
	// UpgradeRequired: only requests that switch protocols (the SPDY and
	// WebSocket streams of exec, attach and portforward) are forwarded;
	// any other is a 400 "Upgrade request required". Without it, upgrades
	// are forwarded and spliced like any proxied request.
	UpgradeRequired bool
	// Subpath is true when the request may name a path after the
	// subresource (proxy: …/pods/p/proxy/metrics); the backend's
	// redirects are then rewritten to stay under the proxy path.
	Subpath bool
}

// Location is where a connect request is forwarded.
type Location struct {
	URL *url.URL
	// Transport reaches URL; nil is the server's transport to pods and
	// services (no client certificate, backends' certificates not
	// verified, as kube-apiserver's proxy transport).
	Transport http.RoundTripper
	// Flush: a streamed body is sent as each read returns (logs with
	// follow) instead of buffered.
	Flush bool
}

// Virtual serves a resource whose objects are not kept in storage: the
// review resources (create only: TokenReview, SubjectAccessReview, …),
// bindings (create only) and componentstatuses (get and list). A nil
// function is a verb the resource does not serve. The Resource's Strategy,
// when set, defaults and validates a created object first.
type Virtual struct {
	// Create answers a POST with the object to return (201 Created).
	Create func(ctx context.Context, env Env, req Request, obj runtime.Object) (runtime.Object, error)
	// Get returns the object named by req.
	Get func(ctx context.Context, env Env, req Request) (runtime.Object, error)
	// List returns the list (of the resource's NewList type).
	List func(ctx context.Context, env Env, req Request) (runtime.Object, error)
}

// StorageView makes a Resource a view of another resource's storage: its
// objects are stored as the other resource's (events.k8s.io/v1 Events are
// stored as core/v1 Events, autoscaling/v1 HorizontalPodAutoscalers as
// autoscaling/v2 ones), so either version reads and watches the same
// objects. Conversions must round-trip what the view can express.
type StorageView struct {
	// Group, Version, Resource and Kind of the stored form; the storage
	// keys are those of that resource.
	Group, Version, Resource, Kind string
	// New returns an empty object of the stored Go type.
	New func() runtime.Object
	// ToStorage converts an object of the view's type into the stored
	// type (what the view cannot express travels in annotations, as
	// Kubernetes keeps autoscaling/v2 fields on autoscaling/v1 objects).
	ToStorage func(obj runtime.Object) (runtime.Object, error)
	// FromStorage converts a stored object into the view's type.
	FromStorage func(stored runtime.Object) (runtime.Object, error)
}

// WarningsStrategy is implemented by strategies of kinds that warn about
// what they accept (deprecated fields and annotations, values that will be
// refused one day): the server sends each warning of a create or an update
// of the main resource that passed validation as an HTTP Warning header,
// as kube-apiserver does.
type WarningsStrategy interface {
	WarningsOnCreate(obj runtime.Object) []string
	WarningsOnUpdate(obj, old runtime.Object) []string
}

type warningsKey struct{}

// WithWarnings returns ctx carrying add, which sends a warning with the
// answer to the request ctx belongs to (set by the server).
func WithWarnings(ctx context.Context, add func(msg string)) context.Context {
	return context.WithValue(ctx, warningsKey{}, add)
}

// AddWarning sends msg with the answer to the request ctx belongs to; it
// does nothing outside a request.
func AddWarning(ctx context.Context, msg string) {
	if add, ok := ctx.Value(warningsKey{}).(func(string)); ok {
		add(msg)
	}
}
