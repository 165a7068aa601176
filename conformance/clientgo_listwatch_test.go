package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/transport"

	"github.com/setpoint-dev/setpoint/testenv"
)

// requestLog records the requests a client-go client sends (method and
// URL), through rest.Config.Wrap.
type requestLog struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

type recordedRequest struct {
	Method string
	URL    *url.URL
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, recordedRequest{Method: r.Method, URL: r.URL})
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// matching returns the recorded GETs on path.
func (l *requestLog) gets(path string) []recordedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []recordedRequest
	for _, r := range l.reqs {
		if r.Method == http.MethodGet && r.URL.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// recordingClientset is a clientset whose requests land in the log.
func recordingClientset(t *testing.T, env *testenv.Environment) (*kubernetes.Clientset, *requestLog) {
	t.Helper()
	log := &requestLog{}
	cfg := clientConfig(t, env)
	cfg.Wrap(transport.WrapperFunc(log.wrap))
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, log
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestClientGoPager: client-go's pager with a page size smaller than the
// object count returns every object once, over really paged requests
// (row 4).
func TestClientGoPager(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs, log := recordingClientset(t, env)
	ctx := context.Background()
	createNamespace(t, cs, "paged")
	const n, page = 53, 7
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("cm-%02d", i)
		want[name] = true
		if _, err := cs.CoreV1().ConfigMaps("paged").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// objects in another namespace are not listed
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().ConfigMaps("paged").List(ctx, opts)
	})
	p.PageSize = page
	seen := map[string]int{}
	var order []string
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
		cm := o.(*corev1.ConfigMap)
		seen[cm.Name]++
		order = append(order, cm.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("pager returned %d distinct objects, want %d", len(seen), n)
	}
	for name, c := range seen {
		if c != 1 || !want[name] {
			t.Errorf("%s seen %d times (expected: %v)", name, c, want[name])
		}
	}
	if !sort.StringsAreSorted(order) {
		t.Errorf("objects not in key order: %v", order)
	}
	reqs := log.gets("/api/v1/namespaces/paged/configmaps")
	pages := (n + page - 1) / page
	if len(reqs) != pages {
		t.Fatalf("%d list requests, want %d pages", len(reqs), pages)
	}
	tokens := map[string]bool{}
	for i, r := range reqs {
		q := r.URL.Query()
		if q.Get("limit") != fmt.Sprint(page) {
			t.Errorf("request %d: limit %q", i, q.Get("limit"))
		}
		c := q.Get("continue")
		if (i == 0) != (c == "") {
			t.Errorf("request %d: continue %q", i, c)
		}
		if c != "" {
			tokens[c] = true
		}
	}
	if len(tokens) != pages-1 {
		t.Errorf("%d distinct continue tokens, want %d", len(tokens), pages-1)
	}

	// a full list through the pager's List (it gathers pages)
	list, paginated, err := p.List(ctx, metav1.ListOptions{})
	if err != nil || !paginated {
		t.Fatalf("pager.List: paginated=%v err=%v", paginated, err)
	}
	if items, err := meta.ExtractList(list); err != nil || len(items) != n {
		t.Fatalf("pager.List: %d items, %v", len(items), err)
	}
}

// TestClientGoWatchBookmarks: a client-go watch with AllowWatchBookmarks
// receives a BOOKMARK before its timeout, whose resourceVersion resumes a
// watch exactly after it (row 5).
func TestClientGoWatchBookmarks(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	createNamespace(t, cs, "bm")
	cms := cs.CoreV1().ConfigMaps("bm")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// writes elsewhere move the revision on while the watch is idle
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	timeout := int64(5)
	start := time.Now()
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var bookmark string
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Bookmark:
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("bookmark object %T", ev.Object)
			}
			if cm.Name != "" || cm.ResourceVersion == "" {
				t.Fatalf("bookmark object %+v", cm.ObjectMeta)
			}
			bookmark = cm.ResourceVersion
		default:
			t.Fatalf("unexpected event %s %v", ev.Type, ev.Object)
		}
	}
	elapsed := time.Since(start)
	if bookmark == "" {
		t.Fatal("no BOOKMARK before the watch timed out")
	}
	if elapsed < 4*time.Second || elapsed > 8*time.Second {
		t.Errorf("watch with timeoutSeconds=5 ended after %v", elapsed)
	}
	if rvNum(t, bookmark) < rvNum(t, list.ResourceVersion) {
		t.Fatalf("bookmark resourceVersion %s older than the list's %s", bookmark, list.ResourceVersion)
	}

	// resume from the bookmark: exactly the later writes arrive
	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: bookmark, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	select {
	case ev := <-w2.ResultChan():
		cm, _ := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || cm == nil || cm.Name != "after" || cm.ResourceVersion != created.ResourceVersion {
			t.Fatalf("first event after resuming from the bookmark: %s %+v", ev.Type, ev.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event after resuming from the bookmark")
	}
}

func rvNum(t *testing.T, rv string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(rv, &n); err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// TestClientGoSelectors: label selectors (=, !=, in, notin, exists, does
// not exist) and field selectors (metadata.name, metadata.namespace,
// spec.nodeName, status.phase) on list and watch give exactly the matching
// pods (row 8).
func TestClientGoSelectors(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	createNamespace(t, cs, "sel")
	createNamespace(t, cs, "sel-other")
	pods := cs.CoreV1().Pods("sel")
	mk := func(ns, name string, labels map[string]string) {
		t.Helper()
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	mk("sel", "p1", map[string]string{"app": "web", "tier": "fe"})
	mk("sel", "p2", map[string]string{"app": "web", "tier": "be"})
	mk("sel", "p3", map[string]string{"app": "db"})
	mk("sel", "p4", nil)
	mk("sel-other", "p1", map[string]string{"app": "web", "tier": "fe"})
	bind := func(name, node string) {
		t.Helper()
		err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	bind("p1", "n1")
	bind("p2", "n1")
	setPhase := func(name string, phase corev1.PodPhase) {
		t.Helper()
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = phase
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPhase("p1", corev1.PodRunning)
	setPhase("p2", corev1.PodPending)
	setPhase("p3", corev1.PodPending)
	setPhase("p4", corev1.PodPending)

	names := func(l *corev1.PodList) []string {
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		sort.Strings(out)
		return out
	}
	cases := []struct {
		label, field string
		all          bool
		want         []string
	}{
		{label: "app=web", want: []string{"sel/p1", "sel/p2"}},
		{label: "app==web,tier=fe", want: []string{"sel/p1"}},
		{label: "app!=web", want: []string{"sel/p3", "sel/p4"}},
		{label: "tier in (fe,x)", want: []string{"sel/p1"}},
		{label: "tier notin (fe)", want: []string{"sel/p2", "sel/p3", "sel/p4"}},
		{label: "tier", want: []string{"sel/p1", "sel/p2"}},
		{label: "!tier", want: []string{"sel/p3", "sel/p4"}},
		{label: "app in (web,db),!tier", want: []string{"sel/p3"}},
		{field: "metadata.name=p1", want: []string{"sel/p1"}},
		{field: "metadata.name!=p1", want: []string{"sel/p2", "sel/p3", "sel/p4"}},
		{field: "metadata.name=p1", all: true, want: []string{"sel-other/p1", "sel/p1"}},
		{field: "metadata.namespace=sel", all: true, want: []string{"sel/p1", "sel/p2", "sel/p3", "sel/p4"}},
		{field: "metadata.namespace!=sel", all: true, label: "app", want: []string{"sel-other/p1"}},
		{field: "spec.nodeName=n1", want: []string{"sel/p1", "sel/p2"}},
		{field: "spec.nodeName=", want: []string{"sel/p3", "sel/p4"}},
		{field: "status.phase=Running", want: []string{"sel/p1"}},
		{field: "status.phase!=Running,spec.nodeName=n1", want: []string{"sel/p2"}},
		{field: "spec.nodeName=n1", label: "tier=be", want: []string{"sel/p2"}},
	}
	for _, c := range cases {
		var l *corev1.PodList
		var err error
		opts := metav1.ListOptions{LabelSelector: c.label, FieldSelector: c.field}
		if c.all {
			l, err = cs.CoreV1().Pods("").List(ctx, opts)
		} else {
			l, err = pods.List(ctx, opts)
		}
		if err != nil {
			t.Errorf("label %q field %q: %v", c.label, c.field, err)
			continue
		}
		if got := names(l); !reflect.DeepEqual(got, c.want) {
			t.Errorf("label %q field %q: %v, want %v", c.label, c.field, got, c.want)
		}
	}
	// an unknown field is refused as kube-apiserver does
	if _, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.unknown=x"}); err == nil {
		t.Error("a field selector on an unsupported field was accepted")
	}

	// watches through selectors: objects enter (ADDED) and leave (DELETED)
	// the selection as their labels and fields change
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lw, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, LabelSelector: "app=web,tier"})
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Stop()
	fw, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, FieldSelector: "spec.nodeName=n2"})
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	pw, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, FieldSelector: "status.phase=Running"})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	patch := func(name, body string) {
		t.Helper()
		if _, err := pods.Patch(ctx, name, "application/merge-patch+json", []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch("p3", `{"metadata":{"labels":{"app":"web","tier":"db"}}}`) // enters
	patch("p1", `{"metadata":{"labels":{"app":"api"}}}`)             // leaves
	patch("p4", `{"metadata":{"labels":{"other":"x"}}}`)             // never matches
	patch("p2", `{"metadata":{"labels":{"tier":"fe"}}}`)             // stays: MODIFIED
	bind("p4", "n2")
	setPhase("p3", corev1.PodRunning)
	setPhase("p1", corev1.PodSucceeded)
	expectEvents(t, lw, []string{"ADDED p3", "DELETED p1", "MODIFIED p2", "MODIFIED p3"})
	expectEvents(t, fw, []string{"ADDED p4"})
	expectEvents(t, pw, []string{"MODIFIED p1", "ADDED p3", "DELETED p1"})
}

// expectEvents reads exactly want ("TYPE name") from w, then nothing more
// for a moment.
func expectEvents(t *testing.T, w watch.Interface, want []string) {
	t.Helper()
	var got []string
	timeout := time.After(5 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v, want %v", got, want)
			}
			got = append(got, string(ev.Type)+" "+ev.Object.(*corev1.Pod).Name)
		case <-timeout:
			t.Fatalf("watch events %v, want %v", got, want)
		}
	}
	select {
	case ev := <-w.ResultChan():
		got = append(got, string(ev.Type)+" "+ev.Object.(*corev1.Pod).Name)
	case <-time.After(300 * time.Millisecond):
	}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("watch events %v, want %v", got, want)
	}
}
