package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/setpoint-dev/setpoint/testenv"
)

// eventLog keeps, per object key, the generations (the "gen" label) an
// informer's handler saw, in order; a deletion is recorded as -1.
type eventLog struct {
	mu     sync.Mutex
	byKey  map[string][]int
	errors []string
}

func newEventLog() *eventLog { return &eventLog{byKey: map[string][]int{}} }

func genOf(o any) (string, int, bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return "", 0, false
	}
	g, err := strconv.Atoi(m.GetLabels()["gen"])
	if err != nil {
		return "", 0, false
	}
	return m.GetNamespace() + "/" + m.GetName(), g, true
}

func (l *eventLog) handler(kind string) cache.ResourceEventHandler {
	rec := func(op string, o any, deleted bool) {
		key, g, ok := genOf(o)
		if !ok {
			return
		}
		key = kind + "|" + key[strings.Index(key, "/")+1:]
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := l.byKey[key]
		switch {
		case op == "add" && len(seen) > 0 && seen[len(seen)-1] != -1:
			l.errors = append(l.errors, fmt.Sprintf("%s: add after %v", key, seen))
		case op != "add" && (len(seen) == 0 || seen[len(seen)-1] == -1):
			l.errors = append(l.errors, fmt.Sprintf("%s: %s before add (%v)", key, op, seen))
		case op == "update" && g < seen[len(seen)-1]:
			l.errors = append(l.errors, fmt.Sprintf("%s: update to gen %d after %v", key, g, seen))
		}
		if deleted {
			g = -1
		}
		l.byKey[key] = append(seen, g)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { rec("add", o, false) },
		UpdateFunc: func(_, o any) { rec("update", o, false) },
		DeleteFunc: func(o any) { rec("delete", o, true) },
	}
}

// informerKinds is one kind written and watched by the informer row.
type informerKind struct {
	name   string
	create func(ctx context.Context, name string, gen int) error
	update func(ctx context.Context, name string, gen int) error
	delete func(ctx context.Context, name string) error
	// server lists the objects (name -> gen), lister reads the informer's
	server, lister func() (map[string]int, error)
}

func gens[T metav1.Object](items []T) map[string]int {
	out := map[string]int{}
	for _, o := range items {
		g, _ := strconv.Atoi(o.GetLabels()["gen"])
		out[o.GetName()] = g
	}
	return out
}

func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

func informerKinds(cs kubernetes.Interface, f informers.SharedInformerFactory, ns string) []informerKind {
	ctx := context.Background()
	lbl := func(gen int) map[string]string { return map[string]string{"gen": strconv.Itoa(gen)} }
	cms, secrets, leases := cs.CoreV1().ConfigMaps(ns), cs.CoreV1().Secrets(ns), cs.CoordinationV1().Leases(ns)
	if f == nil { // writes only
		f = informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	}
	cmLister, secretLister, leaseLister := f.Core().V1().ConfigMaps().Lister(), f.Core().V1().Secrets().Lister(), f.Coordination().V1().Leases().Lister()
	relabel := func(get func() (metav1.Object, error), put func() error, gen int) error {
		o, err := get()
		if err != nil {
			return err
		}
		o.SetLabels(lbl(gen))
		return put()
	}
	return []informerKind{
		{
			name: "configmaps",
			create: func(ctx context.Context, n string, g int) error {
				_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl(g)}}, metav1.CreateOptions{})
				return err
			},
			update: func(ctx context.Context, n string, g int) error {
				var cm *corev1.ConfigMap
				return relabel(func() (metav1.Object, error) {
					var err error
					cm, err = cms.Get(ctx, n, metav1.GetOptions{})
					return cm, err
				}, func() error { _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); return err }, g)
			},
			delete: func(ctx context.Context, n string) error { return cms.Delete(ctx, n, metav1.DeleteOptions{}) },
			server: func() (map[string]int, error) {
				l, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, err
				}
				return gens(ptrs(l.Items)), nil
			},
			lister: func() (map[string]int, error) {
				l, err := cmLister.ConfigMaps(ns).List(labels.Everything())
				return gens(l), err
			},
		},
		{
			name: "secrets",
			create: func(ctx context.Context, n string, g int) error {
				_, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl(g)}}, metav1.CreateOptions{})
				return err
			},
			update: func(ctx context.Context, n string, g int) error {
				_, err := secrets.Patch(ctx, n, "application/merge-patch+json",
					fmt.Appendf(nil, `{"metadata":{"labels":{"gen":"%d"}}}`, g), metav1.PatchOptions{})
				return err
			},
			delete: func(ctx context.Context, n string) error { return secrets.Delete(ctx, n, metav1.DeleteOptions{}) },
			server: func() (map[string]int, error) {
				l, err := secrets.List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, err
				}
				return gens(ptrs(l.Items)), nil
			},
			lister: func() (map[string]int, error) {
				l, err := secretLister.Secrets(ns).List(labels.Everything())
				return gens(l), err
			},
		},
		{
			name: "leases",
			create: func(ctx context.Context, n string, g int) error {
				_, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl(g)}}, metav1.CreateOptions{})
				return err
			},
			update: func(ctx context.Context, n string, g int) error {
				_, err := leases.Patch(ctx, n, "application/strategic-merge-patch+json",
					fmt.Appendf(nil, `{"metadata":{"labels":{"gen":"%d"}}}`, g), metav1.PatchOptions{})
				return err
			},
			delete: func(ctx context.Context, n string) error { return leases.Delete(ctx, n, metav1.DeleteOptions{}) },
			server: func() (map[string]int, error) {
				l, err := leases.List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, err
				}
				return gens(ptrs(l.Items)), nil
			},
			lister: func() (map[string]int, error) {
				l, err := leaseLister.Leases(ns).List(labels.Everything())
				return gens(l), err
			},
		},
	}
}

// retrying repeats op until it succeeds (the server may be restarting);
// NotFound on a delete and AlreadyExists on a create retried after a lost
// response count as done.
func retrying(t *testing.T, what string, op func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || (attempt > 0 && (apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err))) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// writeRound creates objects first..first+n-1 of every kind, updates each
// twice and deletes every third.
func writeRound(t *testing.T, kinds []informerKind, first, n int) {
	ctx := context.Background()
	for _, k := range kinds {
		for i := first; i < first+n; i++ {
			name := fmt.Sprintf("o-%03d", i)
			retrying(t, "create "+k.name+"/"+name, func() error { return k.create(ctx, name, 0) })
		}
		for g := 1; g <= 2; g++ {
			for i := first; i < first+n; i++ {
				name := fmt.Sprintf("o-%03d", i)
				retrying(t, "update "+k.name+"/"+name, func() error { return k.update(ctx, name, g) })
			}
		}
		for i := first; i < first+n; i += 3 {
			name := fmt.Sprintf("o-%03d", i)
			retrying(t, "delete "+k.name+"/"+name, func() error { return k.delete(ctx, name) })
		}
	}
}

// waitListersEqualServer waits until every lister equals a fresh list from
// the server.
func waitListersEqualServer(t *testing.T, kinds []informerKind) map[string]map[string]int {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		all := map[string]map[string]int{}
		equal := true
		var diff string
		for _, k := range kinds {
			s, err := k.server()
			if err != nil {
				t.Fatal(err)
			}
			l, _ := k.lister()
			all[k.name] = s
			if fmt.Sprint(s) != fmt.Sprint(l) {
				equal = false
				diff = fmt.Sprintf("%s: server %v, lister %v", k.name, s, l)
			}
		}
		if equal {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("listers differ from the server: %s", diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkHandlers: every object's events ended in its server state, in
// order (checked as they came).
func checkHandlers(t *testing.T, log *eventLog, server map[string]map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		log.mu.Lock()
		var problems []string
		problems = append(problems, log.errors...)
		for kind, objs := range server {
			for name, g := range objs {
				seen := log.byKey[kind+"|"+name]
				if len(seen) == 0 || seen[len(seen)-1] != g {
					problems = append(problems, fmt.Sprintf("%s %s: handler saw %v, server has gen %d", kind, name, seen, g))
				}
			}
		}
		for key, seen := range log.byKey {
			kind, name, _ := strings.Cut(key, "|")
			if _, exists := server[kind][name]; !exists && seen[len(seen)-1] != -1 {
				problems = append(problems, fmt.Sprintf("%s: deleted on the server, handler saw %v", key, seen))
			}
		}
		log.mu.Unlock()
		if len(problems) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("handlers: %v", problems)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClientGoSharedInformers: SharedInformerFactory informers for three
// kinds sync, stay equal to the server through creates, updates and
// deletes, and through a server restart with writes before, during and
// after it; handlers see every object's events in order (row 3).
func TestClientGoSharedInformers(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs, reqs := recordingClientset(t, env)
	const ns = "inf"
	createNamespace(t, cs, ns)
	kinds0 := informerKinds(cs, nil, ns)
	writeRound(t, kinds0, 0, 10) // objects before the informers start

	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	log := newEventLog()
	kinds := informerKinds(cs, f, ns)
	for name, inf := range map[string]cache.SharedIndexInformer{
		"configmaps": f.Core().V1().ConfigMaps().Informer(),
		"secrets":    f.Core().V1().Secrets().Informer(),
		"leases":     f.Coordination().V1().Leases().Informer(),
	} {
		if _, err := inf.AddEventHandler(log.handler(name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	checkHandlers(t, log, waitListersEqualServer(t, kinds))

	// many writes while the informers run
	writeRound(t, kinds, 10, 30)
	checkHandlers(t, log, waitListersEqualServer(t, kinds))
	watchesBefore := countWatches(reqs, ns)

	// a restart with writes during and after it
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeRound(t, kinds, 40, 15)
	}()
	time.Sleep(30 * time.Millisecond)
	if err := env.Restart(); err != nil {
		t.Fatal(err)
	}
	<-done
	writeRound(t, kinds, 55, 15)
	server := waitListersEqualServer(t, kinds)
	checkHandlers(t, log, server)
	if n := len(server["configmaps"]); n != 46 {
		t.Fatalf("%d configmaps on the server, want 46", n)
	}
	if after := countWatches(reqs, ns); after <= watchesBefore {
		t.Fatalf("no new watch requests after the restart (%d before, %d after)", watchesBefore, after)
	}
}

// countWatches counts the watch requests on the namespace's resources.
func countWatches(l *requestLog, ns string) int {
	n := 0
	for _, p := range []string{"/api/v1/namespaces/" + ns + "/configmaps", "/api/v1/namespaces/" + ns + "/secrets",
		"/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases"} {
		for _, r := range l.gets(p) {
			if r.URL.Query().Get("watch") == "true" {
				n++
			}
		}
	}
	return n
}

// TestClientGoWatchListInformer: with client-go's WatchListClient feature
// on, an informer syncs through a streaming list (a watch with
// sendInitialEvents=true) and never LISTs (row 6).
func TestClientGoWatchListInformer(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	env := startSetpoint(t, testenv.Options{})
	cs, reqs := recordingClientset(t, env)
	const ns, n = "wl", 40
	createNamespace(t, cs, ns)
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; i < n; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().ConfigMaps()
	var mu sync.Mutex
	added := map[string]bool{}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		mu.Lock()
		added[o.(*corev1.ConfigMap).Name] = true
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ctx.Done())
	syncCtx, syncCancel := context.WithTimeout(ctx, 15*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
		t.Fatal("the informer did not sync")
	}
	items, err := inf.Lister().ConfigMaps(ns).List(labels.Everything())
	if err != nil || len(items) != n {
		t.Fatalf("lister after sync: %d objects (%v), want %d", len(items), err, n)
	}
	mu.Lock()
	if len(added) != n {
		t.Errorf("handler saw %d adds, want %d", len(added), n)
	}
	mu.Unlock()

	var lists, streams int
	for _, r := range reqs.gets("/api/v1/namespaces/" + ns + "/configmaps") {
		q := r.URL.Query()
		switch {
		case q.Get("watch") != "true":
			lists++
		case q.Get("sendInitialEvents") == "true":
			streams++
			if q.Get("allowWatchBookmarks") != "true" || q.Get("resourceVersionMatch") != "NotOlderThan" {
				t.Errorf("streaming list request %s", r.URL.RawQuery)
			}
		}
	}
	if lists != 0 || streams != 1 {
		t.Fatalf("%d LIST requests and %d sendInitialEvents watches; want 0 and 1 (requests: %v)", lists, streams, reqs.gets("/api/v1/namespaces/"+ns+"/configmaps"))
	}

	// the informer goes on watching on the same stream
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := inf.Lister().ConfigMaps(ns).Get("later"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the informer missed a create after its streaming list")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
