package rest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// mediaLog records the Accept, request Content-Type and response
// Content-Type of every request a client sends.
type mediaLog struct {
	mu       sync.Mutex
	accept   []string
	sent     []string
	received []string
}

func (l *mediaLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.accept = append(l.accept, r.Header.Get("Accept"))
		l.sent = append(l.sent, r.Header.Get("Content-Type"))
		if err == nil {
			l.received = append(l.received, resp.Header.Get("Content-Type"))
		}
		return resp, err
	})
}

// reset returns what was recorded and forgets it.
func (l *mediaLog) reset() (accept, sent, received []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	accept, sent, received = l.accept, l.sent, l.received
	l.accept, l.sent, l.received = nil, nil, nil
	return
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clientWith builds a client of srv with content type ctype whose media
// types are recorded in log.
func clientWith(t *testing.T, srv *testserver.Server, ctype string, log *mediaLog) *rest.Client {
	t.Helper()
	cfg := srv.RESTConfig(t)
	cfg.ContentType = ctype
	cfg.WrapTransport = log.wrap
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestProtobufAndJSONAgree: a protobuf client and a JSON client see equal
// objects for get, list, watch, create, update and patch of several
// kinds, and the protobuf client really speaks protobuf (bodies and
// answers), but JSON for unstructured objects.
func TestProtobufAndJSONAgree(t *testing.T) {
	ctx := context.Background()
	srv, _ := start(t, nil)
	var pbLog, jsLog mediaLog
	pb := clientWith(t, srv, rest.ContentTypeProtobuf, &pbLog)
	js := clientWith(t, srv, "", &jsLog)

	pbCM, jsCM := configMaps(pb), configMaps(js)
	w, err := pbCM.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	jw, err := jsCM.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer jw.Stop()

	created, err := pbCM.Create(ctx, newCM("pb", map[string]string{"a": "b"}, map[string]string{"k": "v"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create in protobuf: %v", err)
	}
	agree(t, "get configmap", created, must(jsCM.Get(ctx, "pb", metav1.GetOptions{})))
	agree(t, "get configmap (protobuf)", created, must(pbCM.Get(ctx, "pb", metav1.GetOptions{})))
	created.Data["k"] = "w"
	updated, err := pbCM.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil || updated.Data["k"] != "w" {
		t.Fatalf("update in protobuf: %v %v", err, updated)
	}
	patched, err := pbCM.Patch(ctx, "pb", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{})
	if err != nil || patched.Data["p"] != "q" {
		t.Fatalf("patch with a protobuf answer: %v %v", err, patched)
	}
	pl, jl := must(pbCM.List(ctx, metav1.ListOptions{})), must(jsCM.List(ctx, metav1.ListOptions{}))
	agree(t, "list configmaps", pl, jl)
	for _, want := range []*corev1.ConfigMap{created, updated, patched} {
		ev, jev := next(t, w), next(t, jw)
		if ev.Type != jev.Type {
			t.Fatalf("watch: protobuf %s, JSON %s", ev.Type, jev.Type)
		}
		agree(t, "watch event", ev.Object, jev.Object)
		if got := ev.Object.(*corev1.ConfigMap); got.ResourceVersion != want.ResourceVersion && ev.Type != watch.Added {
			t.Fatalf("watch event at %s, want %s", got.ResourceVersion, want.ResourceVersion)
		}
	}

	// Another group: a Deployment created, scaled and updated.
	pbD := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](pb, deployGVR, true).Namespace("default")
	jsD := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](js, deployGVR, true).Namespace("default")
	d, err := pbD.Create(ctx, newDeployment("web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment in protobuf: %v", err)
	}
	agree(t, "get deployment", d, must(jsD.Get(ctx, "web", metav1.GetOptions{})))
	d.Spec.Replicas = new(int32(5))
	d, err = pbD.Update(ctx, d, metav1.UpdateOptions{})
	if err != nil || *d.Spec.Replicas != 5 {
		t.Fatalf("update deployment in protobuf: %v", err)
	}
	agree(t, "list deployments", must(pbD.List(ctx, metav1.ListOptions{})), must(jsD.List(ctx, metav1.ListOptions{})))

	// Errors come back as Statuses in protobuf too.
	if _, err := pbCM.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing in protobuf: %v, want NotFound", err)
	}
	if _, err := pbCM.Create(ctx, newCM("pb", nil, nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create existing in protobuf: %v, want AlreadyExists", err)
	}

	accept, sent, received := pbLog.reset()
	for i := range accept {
		if accept[i] != "application/vnd.kubernetes.protobuf, application/json" {
			t.Errorf("protobuf client request %d accepts %q", i, accept[i])
		}
		if received[i] != "application/vnd.kubernetes.protobuf" && received[i] != "application/vnd.kubernetes.protobuf;stream=watch" {
			t.Errorf("protobuf client request %d answered in %q", i, received[i])
		}
		if sent[i] != "" && sent[i] != "application/vnd.kubernetes.protobuf" && sent[i] != string(types.MergePatchType) {
			t.Errorf("protobuf client request %d sent %q", i, sent[i])
		}
	}
	if _, _, received := jsLog.reset(); len(received) == 0 || received[0] != "application/json" {
		t.Errorf("JSON client answered in %v", received)
	}

	// Unstructured objects have no protobuf form: JSON both ways.
	u, err := rest.Dynamic(pb, cmGVR, true).Namespace("default").Get(ctx, "pb", metav1.GetOptions{})
	if err != nil || u.GetName() != "pb" {
		t.Fatalf("dynamic get with a protobuf client: %v", err)
	}
	if accept, _, received := pbLog.reset(); accept[0] != "application/json" || received[0] != "application/json" {
		t.Errorf("dynamic get: accept %q, answered %q", accept[0], received[0])
	}
}

// TestProtobufWatchBookmarksAndErrors: the protobuf watch stream carries
// the initial-events-end bookmark and ERROR events as the JSON one.
func TestProtobufWatchBookmarksAndErrors(t *testing.T) {
	ctx := context.Background()
	srv, _ := start(t, nil)
	var log mediaLog
	cms := configMaps(clientWith(t, srv, rest.ContentTypeProtobuf, &log))
	if _, err := cms.Create(ctx, newCM("a", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log.reset()
	w, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: new(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "a" {
		t.Fatalf("initial event: %s %#v", ev.Type, ev.Object)
	}
	ev := next(t, w)
	if bm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("initial-events-end bookmark: %s %#v", ev.Type, ev.Object)
	}
	// A too large resourceVersion is refused before the stream opens; a
	// malformed one too; both as API errors decoded from protobuf.
	if _, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "x"}); !apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) {
		t.Fatalf("watch at a malformed resourceVersion: %v", err)
	}
	if _, _, received := log.reset(); received[0] != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("watch answered in %q", received[0])
	}
}

func newDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func agree(t *testing.T, what string, pb, js any) {
	t.Helper()
	if !equality.Semantic.DeepEqual(pb, js) {
		t.Fatalf("%s: protobuf and JSON differ:\nprotobuf %#v\nJSON     %#v", what, pb, js)
	}
}

// cmList is a list type of the caller's own, with no protobuf form (as
// the manager's informers use).
type cmList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []*corev1.ConfigMap `json:"items"`
}

func (l *cmList) DeepCopyObject() runtime.Object {
	out := &cmList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for _, it := range l.Items {
		out.Items = append(out.Items, it.DeepCopy())
	}
	return out
}

// TestProtobufObjectsWithOwnListType: with a list type that has no
// protobuf form, a protobuf client still watches, reads and writes the
// objects in protobuf; only the list is asked for in JSON.
func TestProtobufObjectsWithOwnListType(t *testing.T) {
	ctx := context.Background()
	srv, _ := start(t, nil)
	var log mediaLog
	c := clientWith(t, srv, rest.ContentTypeProtobuf, &log)
	cms := rest.For[*corev1.ConfigMap, *cmList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	if _, err := cms.Create(ctx, newCM("own", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, sent, received := log.reset(); sent[0] != rest.ContentTypeProtobuf || received[0] != rest.ContentTypeProtobuf {
		t.Fatalf("create sent %q, answered in %q", sent[0], received[0])
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: new(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "own" {
		t.Fatalf("initial event: %s %#v", ev.Type, ev.Object)
	}
	if _, _, received := log.reset(); received[0] != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("watch answered in %q", received[0])
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "own" {
		t.Fatalf("list: %v %+v", err, l)
	}
	if accept, _, received := log.reset(); accept[0] != rest.ContentTypeJSON || received[0] != rest.ContentTypeJSON {
		t.Fatalf("list asked for %q, answered in %q", accept[0], received[0])
	}
}

// TestPreferProtobuf: a resource made with PreferProtobuf speaks protobuf
// when the client's ContentType is unset (as client-go's generated clients
// do for built-in kinds), keeps JSON when ContentType says JSON, and keeps
// JSON for unstructured objects.
func TestPreferProtobuf(t *testing.T) {
	ctx := context.Background()
	srv, _ := start(t, nil)
	var unset, js mediaLog
	pb := configMaps(clientWith(t, srv, "", &unset)).PreferProtobuf()
	jsonCM := configMaps(clientWith(t, srv, rest.ContentTypeJSON, &js)).PreferProtobuf()

	created := must(pb.Create(ctx, newCM("preferred", nil, map[string]string{"k": "v"}), metav1.CreateOptions{}))
	agree(t, "get with JSON", created, must(jsonCM.Get(ctx, "preferred", metav1.GetOptions{})))
	l := must(pb.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=preferred"}))
	if len(l.Items) != 1 || l.Items[0].ResourceVersion != created.ResourceVersion || l.Items[0].Data["k"] != "v" {
		t.Fatalf("list in protobuf: %v", l.Items)
	}
	w, err := pb.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	must(pb.Patch(ctx, "preferred", types.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{}))
	if ev := next(t, w); ev.Type != watch.Modified || ev.Object.(*corev1.ConfigMap).Data["p"] != "q" {
		t.Fatalf("watch in protobuf: %s %v", ev.Type, ev.Object)
	}
	accept, sent, received := unset.reset()
	for i := range received {
		if accept[i] != "application/vnd.kubernetes.protobuf, application/json" || !strings.HasPrefix(received[i], rest.ContentTypeProtobuf) {
			t.Errorf("request %d with ContentType unset: accept %q, answered in %q", i, accept[i], received[i])
		}
	}
	if sent[0] != rest.ContentTypeProtobuf {
		t.Errorf("create with ContentType unset sent %q", sent[0])
	}
	if accept, _, received := js.reset(); accept[0] != rest.ContentTypeJSON || received[0] != rest.ContentTypeJSON {
		t.Errorf("ContentType JSON: accept %q, answered in %q", accept[0], received[0])
	}
	dyn := rest.Dynamic(clientWith(t, srv, "", &unset), corev1.SchemeGroupVersion.WithResource("configmaps"), true).PreferProtobuf()
	must(dyn.Namespace("default").Get(ctx, "preferred", metav1.GetOptions{}))
	if accept, _, received := unset.reset(); accept[0] != rest.ContentTypeJSON || received[0] != rest.ContentTypeJSON {
		t.Errorf("unstructured: accept %q, answered in %q", accept[0], received[0])
	}
}
