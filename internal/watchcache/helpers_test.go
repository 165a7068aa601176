package watchcache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/memory"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	cmPrefix    = "/registry/core/configmaps/"
	podPrefix   = "/registry/core/pods/"
	otherPrefix = "/registry/core/secrets/"
)

// env is one real memory store plus one running cache over it.
type env struct {
	t      testing.TB
	codecs *scheme.Codecs
	store  storage.Store
	cache  *Cache
	stop   context.CancelFunc
	ran    chan struct{}
}

// kind describes the test resource: ConfigMaps or Pods.
type kind struct {
	prefix string
	gvk    metav1.TypeMeta
	newObj func() k8sruntime.Object
	attrs  func(obj k8sruntime.Object) (labels.Set, fields.Set, error)
}

var configMaps = kind{
	prefix: cmPrefix,
	gvk:    metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
	newObj: func() k8sruntime.Object {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	},
	attrs: func(obj k8sruntime.Object) (labels.Set, fields.Set, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, nil, fmt.Errorf("not a ConfigMap: %T", obj)
		}
		// tier is a selectable field whose value updates change (as a
		// pod's spec.nodeName changes on binding): the metamorphic test
		// indexes watchers by it.
		return labels.Set(cm.Labels), fields.Set{
			"metadata.name": cm.Name, "metadata.namespace": cm.Namespace, "tier": cm.Labels["tier"],
		}, nil
	},
}

var pods = kind{
	prefix: podPrefix,
	gvk:    metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
	newObj: func() k8sruntime.Object {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	},
	attrs: func(obj k8sruntime.Object) (labels.Set, fields.Set, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, nil, fmt.Errorf("not a Pod: %T", obj)
		}
		return labels.Set(p.Labels), fields.Set{
			"metadata.name": p.Name, "metadata.namespace": p.Namespace,
			"spec.nodeName": p.Spec.NodeName, "status.phase": string(p.Status.Phase),
		}, nil
	},
}

// testConfig is the server-like wiring of a cache for k over store.
func testConfig(codecs *scheme.Codecs, store storage.Store, k kind) Config {
	return Config{
		Store:      store,
		Prefix:     k.prefix,
		Namespaced: true,
		Decode: func(kv storage.KeyValue) (k8sruntime.Object, error) {
			obj, gvk, err := codecs.Proto.Decode(kv.Value, nil, nil)
			if err != nil {
				return nil, err
			}
			obj.GetObjectKind().SetGroupVersionKind(*gvk)
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil, err
			}
			m.SetResourceVersion(strconv.FormatInt(kv.ModRevision, 10))
			return obj, nil
		},
		Attrs:     k.attrs,
		NewObject: k.newObj,
		Encode: func(obj k8sruntime.Object, w io.Writer) error {
			return codecs.JSON.Encode(obj, w)
		},
		Logger: discardLogger(),
	}
}

// newEnv starts a cache over a fresh memory store; mod adjusts the config
// and seed runs on the store before the cache starts.
func newEnv(t testing.TB, k kind, mod func(*Config), seed func(*env)) *env {
	t.Helper()
	e := &env{t: t, codecs: scheme.New(), store: memory.New(), ran: make(chan struct{})}
	if seed != nil {
		seed(e)
	}
	cfg := testConfig(e.codecs, e.store, k)
	if mod != nil {
		mod(&cfg)
	}
	e.cache = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	go func() {
		defer close(e.ran)
		e.cache.Run(ctx)
	}()
	t.Cleanup(e.close)
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := e.cache.WaitReady(wctx); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	return e
}

// close stops the cache, waits for Run, and closes the store.
func (e *env) close() {
	e.stop()
	<-e.ran
	if err := e.store.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
		e.t.Errorf("store Close: %v", err)
	}
}

func (e *env) encode(obj k8sruntime.Object) []byte {
	e.t.Helper()
	var buf bytes.Buffer
	if err := e.codecs.Proto.Encode(obj, &buf); err != nil {
		e.t.Fatalf("encode: %v", err)
	}
	return buf.Bytes()
}

func configMap(ns, name string, lbls map[string]string, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
		Data:       map[string]string{"v": data},
	}
}

func cmKey(ns, name string) string { return cmPrefix + ns + "/" + name }

// create, update and remove write through the store and return the revision.
func (e *env) create(key string, obj k8sruntime.Object) int64 {
	e.t.Helper()
	rev, err := e.store.Create(context.Background(), key, e.encode(obj))
	if err != nil {
		e.t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func (e *env) update(key string, obj k8sruntime.Object) int64 {
	e.t.Helper()
	kv, err := e.store.Get(context.Background(), key)
	if err != nil {
		e.t.Fatalf("Get(%q): %v", key, err)
	}
	rev, err := e.store.Update(context.Background(), key, e.encode(obj), kv.ModRevision)
	if err != nil {
		e.t.Fatalf("Update(%q): %v", key, err)
	}
	return rev
}

func (e *env) remove(key string) int64 {
	e.t.Helper()
	rev, _, err := e.store.Delete(context.Background(), key, 0)
	if err != nil {
		e.t.Fatalf("Delete(%q): %v", key, err)
	}
	return rev
}

func (e *env) storeRev() int64 {
	e.t.Helper()
	rev, err := e.store.CurrentRevision(context.Background())
	if err != nil {
		e.t.Fatalf("CurrentRevision: %v", err)
	}
	return rev
}

// sync waits until the cache has applied and dispatched everything the
// store holds now.
func (e *env) sync() int64 {
	e.t.Helper()
	rev := e.storeRev()
	if err := e.cache.WaitForRevision(context.Background(), rev); err != nil {
		e.t.Fatalf("WaitForRevision(%d): %v", rev, err)
	}
	waitUntil(e.t, "dispatch of "+strconv.FormatInt(rev, 10), func() bool {
		e.cache.wmu.Lock()
		defer e.cache.wmu.Unlock()
		return e.cache.dispatchedRev >= rev
	})
	return rev
}

func (e *env) watch(opts WatchOptions) *Watcher {
	e.t.Helper()
	w, err := e.cache.Watch(context.Background(), opts)
	if err != nil {
		e.t.Fatalf("Watch(%+v): %v", opts, err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

// waitUntil polls cond: it synchronises with goroutines, it times nothing.
// The generous limit only turns a hang into a failure.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testwait.UntilEvery(t, 30*time.Second, 100*time.Microsecond, what, testwait.Bool(cond))
}

// next receives one frame, failing instead of hanging; false when the
// watch ended.
func next(t *testing.T, w *Watcher) (Frame, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, ok := w.Next(ctx)
	if !ok && ctx.Err() != nil {
		t.Fatalf("no frame arrived")
	}
	return f, ok
}

// recv receives one frame, waiting as long as it takes (the zero Frame
// when the watch ended); for goroutines that must not call t.Fatal.
func recv(w *Watcher) Frame {
	f, _ := w.Next(context.Background())
	return f
}

// expectNone checks that no frame is buffered now.
func expectNone(t *testing.T, w *Watcher) {
	t.Helper()
	f, ok, open := w.q.tryPop()
	if ok {
		t.Fatalf("unexpected frame %s", describe(t, f))
	}
	if !open {
		t.Fatalf("unexpected close (err %v)", w.Err())
	}
}

// wire is a decoded frame.
type wire struct {
	Type   watch.EventType `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string            `json:"name"`
			Namespace       string            `json:"namespace"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
		// Status fields.
		Code   int32  `json:"code"`
		Reason string `json:"reason"`
	} `json:"object"`
}

func decodeFrame(t *testing.T, f Frame) wire {
	t.Helper()
	b, err := f.Bytes()
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("frame is not one line ending in a newline: %q", b)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("frame %q: %v", b, err)
	}
	if w.Type != f.Type {
		t.Fatalf("frame type %q, bytes say %q", f.Type, w.Type)
	}
	if f.Type != watch.Error && w.Object.Metadata.ResourceVersion != strconv.FormatInt(f.Revision, 10) {
		t.Fatalf("frame revision %d, object says %q", f.Revision, w.Object.Metadata.ResourceVersion)
	}
	return w
}

func describe(t *testing.T, f Frame) string {
	w := decodeFrame(t, f)
	return fmt.Sprintf("%s %s/%s@%d %v", f.Type, w.Object.Metadata.Namespace, w.Object.Metadata.Name, f.Revision, w.Object.Metadata.Labels)
}

// expectFrame receives one frame and checks its type, name and revision.
func expectFrame(t *testing.T, w *Watcher, typ watch.EventType, name string, rev int64) wire {
	t.Helper()
	f, ok := next(t, w)
	if !ok {
		t.Fatalf("watch closed (err %v), want %s %s@%d", w.Err(), typ, name, rev)
	}
	got := decodeFrame(t, f)
	if f.Type != typ || got.Object.Metadata.Name != name || f.Revision != rev {
		t.Fatalf("got %s, want %s %s@%d", describe(t, f), typ, name, rev)
	}
	return got
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatalf("labels.Parse(%q): %v", s, err)
	}
	return sel
}

func mustFieldSelector(t *testing.T, s string) fields.Selector {
	t.Helper()
	sel, err := fields.ParseSelector(s)
	if err != nil {
		t.Fatalf("fields.ParseSelector(%q): %v", s, err)
	}
	return sel
}

func errorAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}

// discardLogger hides the cache's logs unless WATCHCACHE_LOG is set.
func discardLogger() *slog.Logger {
	if os.Getenv("WATCHCACHE_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}
