package watchcache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Frame is one event of a watch as the JSON watch stream carries it. Frames
// are small values; the encoded bytes behind them are shared between every
// watcher that receives the same event.
type Frame struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type watch.EventType
	// Revision is the resourceVersion of the frame's object (0 for ERROR).
	Revision int64
	// lf is the shared lazily encoded frame; never nil in a delivered Frame.
	lf *lazyFrame
}

// Bytes returns the frame's wire form, the exact line
// {"type":"...","object":{...}}\n, encoding it on first use. The slice is
// shared by every receiver of the frame and must not be modified. The error
// is the Encode failure, identical for every call; the handler should end
// the watch on it. Only Frames received from a Watcher are valid.
func (f Frame) Bytes() ([]byte, error) {
	return f.lf.bytes()
}

// Object returns the frame's object (for encodings other than JSON, such as
// Table watches). It is shared and must not be mutated.
func (f Frame) Object() runtime.Object {
	return f.lf.obj
}

// lazyFrame is the encode-once wire form of one (object, event type).
type lazyFrame struct {
	typ watch.EventType
	// obj is immutable and shared.
	obj runtime.Object
	enc func(runtime.Object, io.Writer) error

	once sync.Once
	// b and err are written once, inside once.
	b   []byte
	err error
}

func newLazyFrame(typ watch.EventType, obj runtime.Object, enc func(runtime.Object, io.Writer) error) *lazyFrame {
	return &lazyFrame{typ: typ, obj: obj, enc: enc}
}

func (l *lazyFrame) frame(rev int64) Frame {
	return Frame{Type: l.typ, Revision: rev, lf: l}
}

func (l *lazyFrame) bytes() ([]byte, error) {
	l.once.Do(l.encode)
	return l.b, l.err
}

func (l *lazyFrame) encode() {
	var buf bytes.Buffer
	buf.WriteString(`{"type":`)
	buf.WriteString(strconv.Quote(string(l.typ)))
	buf.WriteString(`,"object":`)
	start := buf.Len()
	if err := l.enc(l.obj, &buf); err != nil {
		l.err = fmt.Errorf("encode %s watch frame: %w", l.typ, err)
		return
	}
	b := bytes.TrimRight(buf.Bytes(), " \t\r\n")
	if len(b) == start {
		l.err = fmt.Errorf("encode %s watch frame: encoder wrote nothing", l.typ)
		return
	}
	out := make([]byte, 0, len(b)+2)
	out = append(out, b...)
	l.b = append(out, '}', '\n')
}

// encodeJSON encodes objects that need no scheme (Status).
func encodeJSON(obj runtime.Object, w io.Writer) error {
	return json.NewEncoder(w).Encode(obj)
}

// errorFrame builds the ERROR frame carrying status.
func errorFrame(status metav1.Status) Frame {
	return newLazyFrame(watch.Error, &status, encodeJSON).frame(0)
}

// bookmarkFrame builds a (shareable) BOOKMARK frame at rev: an empty object
// of the kind with only metadata.resourceVersion and, for the end of the
// initial events, the k8s.io/initial-events-end annotation.
func (c *Cache) bookmarkFrame(rev int64, initialEventsEnd bool) Frame {
	obj := c.cfg.NewObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("watchcache: Config.NewObject was checked by New: %v", err))
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEventsEnd {
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return newLazyFrame(watch.Bookmark, obj, c.cfg.Encode).frame(rev)
}
