package informer

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

func TestFactorySharesInformersByKey(t *testing.T) {
	_, c, _ := start(t)
	f := NewFactory(c, FactoryOptions{Namespace: "default"})
	typed := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true)
	if again := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true); again != typed {
		t.Fatal("same key gave a new informer")
	}
	selected := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true, WithLabelSelector("app=x"))
	if selected == typed {
		t.Fatal("a different label selector shared the informer")
	}
	if For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true, InNamespace("other")) == typed {
		t.Fatal("a different namespace shared the informer")
	}
	nsGVR := corev1.SchemeGroupVersion.WithResource("namespaces")
	// Cluster-scoped: the namespace is not part of the key.
	if For[*corev1.Namespace, *corev1.NamespaceList](f, nsGVR, false) != For[*corev1.Namespace, *corev1.NamespaceList](f, nsGVR, false, InNamespace("x")) {
		t.Fatal("cluster-scoped informer keyed by namespace")
	}
	dynamic := Dynamic(f, cmGVR, true)
	if Dynamic(f, cmGVR, true) != dynamic {
		t.Fatal("same dynamic key gave a new informer")
	}

	create(t, c, "plain", "1")
	labelled := configMap("labelled", "1")
	labelled.Labels = map[string]string{"app": "x"}
	if _, err := configMaps(c).Create(context.Background(), labelled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	syncCtx, syncCancel := context.WithTimeout(ctx, waitFor)
	synced := f.WaitForCacheSync(syncCtx)
	syncCancel()
	want := map[schema.GroupVersionResource]bool{cmGVR: true, nsGVR: true}
	if len(synced) != len(want) || !synced[cmGVR] || !synced[nsGVR] {
		t.Fatalf("WaitForCacheSync = %v, want %v", synced, want)
	}

	if got := names(typed.Indexer().List()); !sameSet(got, "plain", "labelled") {
		t.Fatalf("typed informer holds %v", got)
	}
	if got := names(selected.Indexer().List()); !sameSet(got, "labelled") {
		t.Fatalf("selector informer holds %v", got)
	}
	u, err := dynamic.Lister().Namespace("default").Get("labelled")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u.Object, "data", "v"); v != "1" || u.GetKind() != "ConfigMap" {
		t.Fatalf("dynamic object: kind %q data.v %q", u.GetKind(), v)
	}

	// An informer requested after Start runs at the next Start.
	late := For[*corev1.Secret, *corev1.SecretList](f, corev1.SchemeGroupVersion.WithResource("secrets"), true)
	if late.IsStarted() {
		t.Fatal("informer requested after Start is running")
	}
	f.Start(ctx)
	waitSynced(t, late.HasSynced)

	cancel()
	f.Shutdown()
	after := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true, WithFieldSelector("metadata.name=plain"))
	f.Start(ctx)
	if after.IsStarted() {
		t.Fatal("Start after Shutdown started an informer")
	}
}

func TestFactoryTransform(t *testing.T) {
	_, c, _ := start(t)
	create(t, c, "a", "1")
	mark := func(obj metav1.Object) (metav1.Object, error) {
		obj.SetAnnotations(map[string]string{"transformed": "yes"})
		return obj, nil
	}
	f := NewFactory(c, FactoryOptions{Namespace: "default", Transform: mark})
	typed := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true)
	dynamic := Dynamic(f, cmGVR, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx)
	waitSynced(t, typed.HasSynced, dynamic.HasSynced)
	for _, obj := range []metav1.Object{typed.Indexer().List()[0], dynamic.Indexer().List()[0]} {
		if obj.GetAnnotations()["transformed"] != "yes" {
			t.Fatalf("%T not transformed: %v", obj, obj.GetAnnotations())
		}
	}
}

func names[T metav1.Object](objs []T) []string {
	out := make([]string, len(objs))
	for k, o := range objs {
		out[k] = o.GetName()
	}
	return out
}

func sameSet(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, g := range got {
		seen[g] = true
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

// answerLog records the Content-Type of every answer, by query, of a
// client's requests.
type answerLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	got  []string
}

func (l *answerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err == nil {
		l.mu.Lock()
		l.got = append(l.got, r.URL.RawQuery+" -> "+resp.Header.Get("Content-Type"))
		l.mu.Unlock()
	}
	return resp, err
}

// TestFactoryInformersSpeakProtobuf: with the client's ContentType unset,
// the factory's informers of built-in kinds list and watch in protobuf, as
// client-go's do (decoding JSON dominated a large initial sync), while
// dynamic informers stay JSON; both caches hold the objects.
func TestFactoryInformersSpeakProtobuf(t *testing.T) {
	srv, c, _ := start(t)
	create(t, c, "proto", "1")
	cfg := srv.RESTConfig(t)
	log := &answerLog{base: srv.Client.Transport}
	cfg.Transport = log
	lc, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.CloseIdleConnections)
	f := NewFactory(lc, FactoryOptions{Namespace: "default"})
	typed := For[*corev1.ConfigMap, *corev1.ConfigMapList](f, cmGVR, true)
	dynamic := Dynamic(f, cmGVR, true, WithLabelSelector("!absent"))
	ctx, cancel := context.WithCancel(context.Background())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx)
	waitSynced(t, typed.HasSynced)
	waitSynced(t, dynamic.HasSynced)
	if got, err := typed.Lister().Namespace("default").Get("proto"); err != nil || got.Data["v"] != "1" {
		t.Fatalf("typed cache: %v %v", got, err)
	}
	if u, err := dynamic.Lister().Namespace("default").Get("proto"); err != nil || u.GetName() != "proto" {
		t.Fatalf("dynamic cache: %v %v", u, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	var typedProto, dynamicJSON bool
	for _, a := range log.got {
		query, ctype, _ := strings.Cut(a, " -> ")
		dyn := strings.Contains(query, "labelSelector")
		switch {
		case !dyn && strings.HasPrefix(ctype, rest.ContentTypeProtobuf):
			typedProto = true
		case dyn && strings.HasPrefix(ctype, rest.ContentTypeJSON):
			dynamicJSON = true
		default:
			t.Errorf("answer %s", a)
		}
	}
	if !typedProto || !dynamicJSON {
		t.Fatalf("answers %v: typed in protobuf %v, dynamic in JSON %v", log.got, typedProto, dynamicJSON)
	}
}
