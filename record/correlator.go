package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// CombinedPrefix starts the message of an event that stands for several
// similar ones.
const CombinedPrefix = "(combined from similar events): "

// CorrelatorOptions tune deduplication, aggregation and spam filtering.
// Zero values select the defaults, which are Kubernetes'.
type CorrelatorOptions struct {
	// MaxSimilar is how many distinct messages one (source, object, type,
	// reason) may have as separate events within SimilarInterval; each
	// further distinct message is folded into one combined event. Default 10.
	MaxSimilar int
	// SimilarInterval is how long similar events are remembered after the
	// last one. Default 10 minutes.
	SimilarInterval time.Duration
	// SpamBurst is how many events one (source, object) may emit at once.
	// Default 25.
	SpamBurst int
	// SpamRefill is the time to earn one more event. Default 5 minutes.
	SpamRefill time.Duration
	// CacheSize bounds each of the three caches (LRU). Default 4096.
	CacheSize int
}

func (o CorrelatorOptions) withDefaults() CorrelatorOptions {
	if o.MaxSimilar <= 0 {
		o.MaxSimilar = 10
	}
	if o.SimilarInterval <= 0 {
		o.SimilarInterval = 10 * time.Minute
	}
	if o.SpamBurst <= 0 {
		o.SpamBurst = 25
	}
	if o.SpamRefill <= 0 {
		o.SpamRefill = 5 * time.Minute
	}
	if o.CacheSize <= 0 {
		o.CacheSize = 4096
	}
	return o
}

// decision says what to do with one event.
type decision struct {
	skip  bool          // dropped by the spam filter
	event *corev1.Event // what to write (a modified copy)
	patch []byte        // nil: create event; else patch event.Name with it
	key   string        // dedupe key, for written
}

// correlator turns the stream of recorded events into writes. It is owned
// by the broadcaster's worker goroutine and not safe for concurrent use.
type correlator struct {
	opts  CorrelatorOptions
	clock clock.PassiveClock
	// spam maps a source+object key to its *bucket.
	spam *lru.Cache
	// similar maps a source+object+type+reason key to its *similar.
	similar *lru.Cache
	// seen maps a dedupe key to the *seen state of the event stored for it;
	// entries are added only after a successful write.
	seen *lru.Cache
}

// bucket is a token bucket: tokens in [0, burst], refilled continuously.
type bucket struct {
	tokens float64
	last   time.Time
}

// similar remembers the distinct messages kept as separate events.
type similar struct {
	messages map[string]struct{} // at most MaxSimilar entries
	last     time.Time
}

// seen is the stored state of a deduplicated event.
type seen struct {
	name, namespace string
	count           int32
	first           metav1.Time
}

func newCorrelator(o CorrelatorOptions, clk clock.PassiveClock) *correlator {
	o = o.withDefaults()
	return &correlator{opts: o, clock: clk, spam: lru.New(o.CacheSize), similar: lru.New(o.CacheSize), seen: lru.New(o.CacheSize)}
}

// correlate applies, in order, the spam filter, aggregation of similar
// events and deduplication of identical ones. ev is not modified.
func (c *correlator) correlate(ev *corev1.Event) decision {
	now := c.clock.Now()
	if !c.allow(spamKey(ev), now) {
		return decision{skip: true}
	}
	out := ev.DeepCopy()
	key := dedupeKey(ev)
	if c.aggregate(ev, now) {
		out.Message = CombinedPrefix + ev.Message
		key = "combined\x00" + similarKey(ev)
	}
	prev, ok := c.seen.Get(key)
	if !ok {
		return decision{event: out, key: key}
	}
	s := prev.(*seen)
	out.Name, out.Namespace = s.name, s.namespace
	out.Count = s.count + 1
	out.FirstTimestamp = s.first
	patch, err := json.Marshal(map[string]any{
		"count": out.Count, "lastTimestamp": out.LastTimestamp, "message": out.Message,
	})
	if err != nil { // cannot happen for these types
		panic(fmt.Sprintf("record: marshal event patch: %v", err))
	}
	return decision{event: out, patch: patch, key: key}
}

// written records the stored state of a decision's event.
func (c *correlator) written(key string, stored *corev1.Event) {
	c.seen.Add(key, &seen{name: stored.Name, namespace: stored.Namespace, count: stored.Count, first: stored.FirstTimestamp})
}

// allow takes a token from key's bucket if one is available at now.
func (c *correlator) allow(key string, now time.Time) bool {
	burst := float64(c.opts.SpamBurst)
	v, ok := c.spam.Get(key)
	if !ok {
		v = &bucket{tokens: burst, last: now}
		c.spam.Add(key, v)
	}
	b := v.(*bucket)
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(burst, b.tokens+float64(d)/float64(c.opts.SpamRefill))
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// aggregate reports whether ev must be folded into its combined event: its
// message is new and MaxSimilar distinct messages were already seen for its
// similar key within SimilarInterval of the last one.
func (c *correlator) aggregate(ev *corev1.Event, now time.Time) bool {
	key := similarKey(ev)
	v, ok := c.similar.Get(key)
	if !ok || now.Sub(v.(*similar).last) > c.opts.SimilarInterval {
		v = &similar{messages: map[string]struct{}{}}
		c.similar.Add(key, v)
	}
	s := v.(*similar)
	s.last = now
	if _, ok := s.messages[ev.Message]; ok {
		return false
	}
	if len(s.messages) < c.opts.MaxSimilar {
		s.messages[ev.Message] = struct{}{}
		return false
	}
	return true
}

func objectKey(ev *corev1.Event) []string {
	o := &ev.InvolvedObject
	return []string{ev.Source.Component, ev.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion}
}

// spamKey identifies the source and the object.
func spamKey(ev *corev1.Event) string { return strings.Join(objectKey(ev), "\x00") }

// similarKey identifies everything but the message.
func similarKey(ev *corev1.Event) string {
	return strings.Join(append(objectKey(ev), ev.InvolvedObject.FieldPath, ev.Type, ev.Reason,
		ev.ReportingController, ev.ReportingInstance), "\x00")
}

// dedupeKey identifies an event completely.
func dedupeKey(ev *corev1.Event) string { return similarKey(ev) + "\x00" + ev.Message }
