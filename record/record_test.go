package record_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// wholeSecond is a fake start time: event timestamps travel with second
// precision.
var wholeSecond = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestEventsAppearWithInvolvedObject(t *testing.T) {
	srv, c := start(t)
	b := newBroadcaster(t, record.Options{Sink: record.NewRESTSink(c)})
	rec := b.NewRecorder(corev1.EventSource{Component: "tester", Host: "node-1"})

	cm := configMap(t, c, "settings")
	rec.Event(cm, corev1.EventTypeNormal, "Synced", "configmap synced")
	rec.AnnotatedEventf(cm, map[string]string{"example.com/trace": "abc"}, corev1.EventTypeWarning, "Failed", "try %d failed", 3)
	rec.Event(cm, "Bogus", "Ignored", "unsupported type is dropped")
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	widget.SetNamespace(ns)
	widget.SetName("w1")
	widget.SetUID("uid-w1")
	rec.Event(widget, corev1.EventTypeNormal, "Built", "widget built")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "uid-node"}} // cluster-scoped
	rec.Event(node, corev1.EventTypeNormal, "Seen", "node seen")
	flush(t, b)

	evs := eventsFor(t, srv, "settings")
	if len(evs) != 2 {
		t.Fatalf("events about the configmap: %d (%v), want 2", len(evs), evs)
	}
	e := evs["configmap synced"]
	want := corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: ns, Name: "settings", UID: cm.UID, ResourceVersion: cm.ResourceVersion}
	if e.InvolvedObject != want {
		t.Errorf("involvedObject = %+v, want %+v", e.InvolvedObject, want)
	}
	if e.Type != corev1.EventTypeNormal || e.Reason != "Synced" || e.Count != 1 || e.Source.Component != "tester" ||
		e.Source.Host != "node-1" || e.ReportingController != "tester" || !strings.HasPrefix(e.Name, "settings.") {
		t.Errorf("event = %+v", e)
	}
	w := evs["try 3 failed"]
	if w.Type != corev1.EventTypeWarning || w.Annotations["example.com/trace"] != "abc" {
		t.Errorf("annotated warning = type %q annotations %v", w.Type, w.Annotations)
	}
	ws := eventsFor(t, srv, "w1")["widget built"]
	if ws.InvolvedObject.APIVersion != "example.com/v1" || ws.InvolvedObject.Kind != "Widget" || ws.InvolvedObject.UID != "uid-w1" {
		t.Errorf("widget reference = %+v", ws.InvolvedObject)
	}
	n := eventsFor(t, srv, "node-1")["node seen"]
	if n.Namespace != ns || n.InvolvedObject.Kind != "Node" || n.InvolvedObject.Namespace != "" {
		t.Errorf("cluster-scoped object's event: namespace %q ref %+v", n.Namespace, n.InvolvedObject)
	}
	if s := b.Stats(); s.Written != 4 || s.Dropped+s.Failed+s.Filtered != 0 {
		t.Errorf("stats = %+v, want 4 written", s)
	}
}

func TestRepeatedEventCountsUp(t *testing.T) {
	srv, c := start(t)
	fc := clocktesting.NewFakeClock(wholeSecond)
	b := newBroadcaster(t, record.Options{Sink: record.NewRESTSink(c), Clock: fc})
	rec := b.NewComponentRecorder("tester")
	cm := configMap(t, c, "repeat")
	for i := 0; i < 3; i++ {
		rec.Event(cm, corev1.EventTypeNormal, "Synced", "synced")
		fc.Step(time.Second)
	}
	rec.Event(cm, corev1.EventTypeNormal, "Synced", "a different message")
	flush(t, b)
	evs := eventsFor(t, srv, "repeat")
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2: %v", len(evs), evs)
	}
	e := evs["synced"]
	if e.Count != 3 || !e.FirstTimestamp.Time.Equal(wholeSecond) || !e.LastTimestamp.Time.Equal(wholeSecond.Add(2*time.Second)) {
		t.Errorf("repeated event: count %d first %v last %v; want 3, %v, %v", e.Count, e.FirstTimestamp, e.LastTimestamp, wholeSecond, wholeSecond.Add(2*time.Second))
	}
	if d := evs["a different message"]; d.Count != 1 {
		t.Errorf("other message count %d, want 1", d.Count)
	}
}

// TestPatchOfVanishedEventRecreates: when the stored event is gone (the
// server's TTL), the next repeat creates it again with the running count.
func TestPatchOfVanishedEventRecreates(t *testing.T) {
	srv, c := start(t)
	fc := clocktesting.NewFakeClock(wholeSecond)
	b := newBroadcaster(t, record.Options{Sink: record.NewRESTSink(c), Clock: fc})
	rec := b.NewComponentRecorder("tester")
	cm := configMap(t, c, "vanish")
	rec.Event(cm, corev1.EventTypeNormal, "Synced", "synced")
	flush(t, b)
	first := eventsFor(t, srv, "vanish")["synced"]
	events := rest.For[*corev1.Event, *corev1.EventList](c, eventGVR, true).Namespace(ns)
	if err := events.Delete(context.Background(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete event: %v", err)
	}
	rec.Event(cm, corev1.EventTypeNormal, "Synced", "synced")
	flush(t, b)
	again := eventsFor(t, srv, "vanish")["synced"]
	if again.Name != first.Name || again.Count != 2 {
		t.Errorf("recreated event %s count %d, want %s count 2", again.Name, again.Count, first.Name)
	}
}

func TestSimilarEventsAggregated(t *testing.T) {
	srv, c := start(t)
	fc := clocktesting.NewFakeClock(wholeSecond)
	b := newBroadcaster(t, record.Options{Sink: record.NewRESTSink(c), Clock: fc})
	rec := b.NewComponentRecorder("tester")
	cm := configMap(t, c, "similar")
	for i := 0; i < 13; i++ {
		rec.Eventf(cm, corev1.EventTypeWarning, "BackOff", "attempt %d failed", i)
	}
	rec.Eventf(cm, corev1.EventTypeWarning, "BackOff", "attempt %d failed", 0) // an old message repeats
	rec.Eventf(cm, corev1.EventTypeWarning, "OtherReason", "attempt %d failed", 99)
	flush(t, b)

	evs := eventsFor(t, srv, "similar")
	if len(evs) != 12 {
		t.Fatalf("%d events, want 10 single + 1 combined + 1 other reason: %v", len(evs), keys(evs))
	}
	for i := 0; i < 10; i++ {
		e, ok := evs[fmt.Sprintf("attempt %d failed", i)]
		wantCount := int32(1)
		if i == 0 {
			wantCount = 2
		}
		if !ok || e.Count != wantCount {
			t.Errorf("attempt %d: present %v count %d, want count %d", i, ok, e.Count, wantCount)
		}
	}
	comb, ok := evs[record.CombinedPrefix+"attempt 12 failed"]
	if !ok || comb.Count != 3 || comb.Reason != "BackOff" {
		t.Errorf("combined event: present %v count %d reason %q, want 3 BackOff (messages: %v)", ok, comb.Count, comb.Reason, keys(evs))
	}

	// Ten quiet minutes (and a bit) later, a new message stands alone again.
	fc.Step(10*time.Minute + time.Second)
	rec.Event(cm, corev1.EventTypeWarning, "BackOff", "fresh failure")
	flush(t, b)
	if e, ok := eventsFor(t, srv, "similar")["fresh failure"]; !ok || e.Count != 1 {
		t.Errorf("event after the similar interval: present %v count %d", ok, e.Count)
	}
}

func keys(m map[string]corev1.Event) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSpamFilter(t *testing.T) {
	srv, c := start(t)
	fc := clocktesting.NewFakeClock(wholeSecond)
	b := newBroadcaster(t, record.Options{Sink: record.NewRESTSink(c), Clock: fc})
	rec := b.NewComponentRecorder("tester")
	noisy := configMap(t, c, "noisy")
	quietCM := configMap(t, c, "quiet")
	for i := 0; i < 30; i++ {
		rec.Event(noisy, corev1.EventTypeNormal, "Tick", "tick")
	}
	rec.Event(quietCM, corev1.EventTypeNormal, "Tick", "tick")
	b.NewComponentRecorder("other").Event(noisy, corev1.EventTypeNormal, "Tick", "tick")
	flush(t, b)
	if e := eventsFor(t, srv, "noisy"); len(e) != 1 || e["tick"].Count != 25 {
		t.Fatalf("noisy object: %d events, count %d; want 1 with count 25", len(e), e["tick"].Count)
	}
	if s := b.Stats(); s.Filtered != 5 {
		t.Fatalf("filtered %d, want 5", s.Filtered)
	}
	if e := eventsFor(t, srv, "quiet"); e["tick"].Count != 1 {
		t.Errorf("another object is limited separately: count %d", e["tick"].Count)
	}
	others := 0
	for _, e := range listEvents(t, srv, ns) {
		if e.InvolvedObject.Name == "noisy" && e.Source.Component == "other" {
			others++
		}
	}
	if others != 1 {
		t.Errorf("another source is limited separately: %d events", others)
	}

	// One token every five minutes.
	fc.Step(5 * time.Minute)
	rec.Event(noisy, corev1.EventTypeNormal, "Tick", "tick")
	rec.Event(noisy, corev1.EventTypeNormal, "Tick", "tick")
	flush(t, b)
	if e := eventsFor(t, srv, "noisy"); e["tick"].Count != 26 {
		t.Errorf("after 5 minutes: count %d, want 26", e["tick"].Count)
	}
	if s := b.Stats(); s.Filtered != 6 || s.Written != 28 {
		t.Errorf("stats = %+v, want 6 filtered, 28 written", s)
	}
}

// TestRetriesQueueLimitAndShutdown points the sink at a port where nothing
// listens: writes fail with a transport error and are retried on the fake
// clock up to MaxTries; while the worker waits, a full queue drops events;
// a Shutdown whose context has ended abandons what is left.
func TestRetriesQueueLimitAndShutdown(t *testing.T) {
	c, err := rest.New(&rest.Config{Host: closedURL(t), MaxRetries: -1, TLS: rest.TLSConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	fc := clocktesting.NewFakeClock(wholeSecond)
	b, err := record.NewBroadcaster(record.Options{
		Sink: record.NewRESTSink(c), Clock: fc, Logger: quiet(), QueueSize: 2, MaxTries: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := b.NewComponentRecorder("tester")
	obj := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}}
	}

	// MaxTries: 3 attempts, 2 waits, then given up.
	rec.Event(obj(0), corev1.EventTypeNormal, "R", "m")
	for i := 0; i < 2; i++ {
		eventually(t, "the worker's retry wait", fc.HasWaiters)
		fc.Step(10 * time.Second)
	}
	eventually(t, "the event to be given up", func() bool { return b.Stats().Failed == 1 })
	if fc.HasWaiters() {
		t.Fatal("worker still waiting after MaxTries")
	}

	// Queue limit: the worker holds one event in its retry wait; two fit
	// in the queue; three are dropped.
	rec.Event(obj(1), corev1.EventTypeNormal, "R", "m")
	eventually(t, "the worker's retry wait", fc.HasWaiters)
	for i := 2; i < 7; i++ {
		rec.Event(obj(i), corev1.EventTypeNormal, "R", "m")
	}
	if s := b.Stats(); s.Dropped != 3 {
		t.Fatalf("dropped %d, want 3", s.Dropped)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown with an ended context and pending events returned nil")
	}
	rec.Event(obj(9), corev1.EventTypeNormal, "R", "m")
	s := b.Stats()
	if s.Failed != 4 || s.Dropped != 4 || s.Written != 0 {
		t.Fatalf("stats = %+v, want 4 failed (1 given up, 1 in flight, 2 queued), 4 dropped", s)
	}
	if err := b.Flush(context.Background()); err == nil {
		t.Fatal("Flush after an abandoning Shutdown returned nil")
	}
}

// TestConcurrentRecordingAndShutdown records from many goroutines while
// the broadcaster shuts down: every event is accounted for exactly once.
func TestConcurrentRecordingAndShutdown(t *testing.T) {
	_, c := start(t)
	b, err := record.NewBroadcaster(record.Options{Sink: record.NewRESTSink(c), Logger: quiet(), QueueSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 40
	var wg sync.WaitGroup
	startLine := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := b.NewComponentRecorder(fmt.Sprintf("writer-%d", w))
			<-startLine
			for i := 0; i < each; i++ {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("obj-%d", i%5)}}
				rec.Eventf(cm, corev1.EventTypeNormal, "Step", "step %d", i)
			}
		}()
	}
	close(startLine)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	wg.Wait()
	s := b.Stats()
	if total := s.Written + s.Dropped + s.Filtered + s.Failed; total != writers*each {
		t.Fatalf("stats %+v account for %d events, want %d", s, total, writers*each)
	}
	if s.Failed != 0 {
		t.Errorf("%d events failed against a healthy server", s.Failed)
	}
}
