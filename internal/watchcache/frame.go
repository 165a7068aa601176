package watchcache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Frame is one event of a watch as the watch streams carry it. Frames are
// small values; the encoded bytes behind them (JSON and, when the cache has
// a protobuf encoder, protobuf) are shared between every watcher that
// receives the same event.
type Frame struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type watch.EventType
	// Revision is the resourceVersion of the frame's object (0 for ERROR).
	Revision int64
	// lf is the shared lazily encoded frame; never nil in a delivered Frame.
	lf *lazyFrame
}

// Bytes returns the frame's JSON wire form, the exact line
// {"type":"...","object":{...}}\n, encoding it on first use. The slice is
// shared by every receiver of the frame and must not be modified. The error
// is the Encode failure, identical for every call; the handler should end
// the watch on it. Only Frames received from a Watcher are valid.
func (f Frame) Bytes() ([]byte, error) {
	return f.lf.json.get(f.lf, encodeJSONFrame)
}

// ProtoBytes returns the frame's protobuf wire form, as kube-apiserver
// writes the application/vnd.kubernetes.protobuf;stream=watch stream: a
// 4-byte big-endian length, then a metav1.WatchEvent in protobuf whose
// object is the protobuf encoding of the object (the "k8s\x00" magic and a
// runtime.Unknown envelope, as Config.EncodeProto writes it). It is encoded
// on first use, at most once per frame, and shared like Bytes. It fails
// when the cache has no EncodeProto (kinds without a protobuf form).
func (f Frame) ProtoBytes() ([]byte, error) {
	return f.lf.protoEncoded().get(f.lf, encodeProtoFrame)
}

// protoEncoded returns the lazy frame's protobuf form holder, allocating
// it on first need.
func (l *lazyFrame) protoEncoded() *encoded {
	e := l.proto.Load()
	if e == nil {
		e = new(encoded)
		if !l.proto.CompareAndSwap(nil, e) {
			e = l.proto.Load()
		}
	}
	return e
}

// Object returns the frame's object (for encodings other than JSON, such as
// Table watches). It is shared and must not be mutated.
func (f Frame) Object() runtime.Object {
	return f.lf.obj
}

// encoders are the object encoders of one cache, shared by its frames.
type encoders struct {
	json, proto func(runtime.Object, io.Writer) error
	// typeMeta, when set, is the cache's: object frames then also locate
	// their object's list item form (see Item).
	typeMeta *typeMetaCache
}

// encoded is one encode-once wire form of a frame.
type encoded struct {
	once sync.Once
	// b, item and err are written once, inside once; done is set after
	// them. item is the part of b that is the object as an item of a list
	// (nil when the frame has none; see Item).
	b, item []byte
	err     error
	done    atomic.Bool
}

func (e *encoded) get(l *lazyFrame, enc func(*lazyFrame) (b, item []byte, err error)) ([]byte, error) {
	e.make(l, enc)
	return e.b, e.err
}

func (e *encoded) make(l *lazyFrame, enc func(*lazyFrame) (b, item []byte, err error)) {
	e.once.Do(func() {
		e.b, e.item, e.err = enc(l)
		e.done.Store(true)
	})
}

// readyItem returns the list item form if the encoding has been made,
// without making it.
func (e *encoded) readyItem() ([]byte, bool) {
	if e == nil || !e.done.Load() || e.err != nil || e.item == nil {
		return nil, false
	}
	return e.item, true
}

// lazyFrame is the encode-once wire forms of one (object, event type).
type lazyFrame struct {
	typ watch.EventType
	// obj is immutable and shared.
	obj  runtime.Object
	encs *encoders
	json encoded
	// proto is allocated by the first protobuf watcher to need it.
	proto atomic.Pointer[encoded]
}

func newLazyFrame(typ watch.EventType, obj runtime.Object, encs *encoders) *lazyFrame {
	return &lazyFrame{typ: typ, obj: obj, encs: encs}
}

func (l *lazyFrame) frame(rev int64) Frame {
	return Frame{Type: l.typ, Revision: rev, lf: l}
}

func encodeJSONFrame(l *lazyFrame) ([]byte, []byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":`)
	buf.WriteString(strconv.Quote(string(l.typ)))
	buf.WriteString(`,"object":`)
	start := buf.Len()
	if err := l.encs.json(l.obj, &buf); err != nil {
		return nil, nil, fmt.Errorf("encode %s watch frame: %w", l.typ, err)
	}
	b := bytes.TrimRight(buf.Bytes(), " \t\r\n")
	if len(b) == start {
		return nil, nil, fmt.Errorf("encode %s watch frame: encoder wrote nothing", l.typ)
	}
	out := make([]byte, 0, len(b)+2)
	out = append(out, b...)
	out = append(out, '}', '\n')
	var item []byte
	if l.encs.typeMeta != nil {
		item = jsonListItem(out[start:len(out)-2], l.encs.typeMeta.prefix(l.obj.GetObjectKind().GroupVersionKind()))
	}
	return out, item, nil
}

func encodeProtoFrame(l *lazyFrame) ([]byte, []byte, error) {
	if l.encs.proto == nil {
		return nil, nil, fmt.Errorf("encode %s watch frame: %w", l.typ, ErrNoProtobuf)
	}
	var buf bytes.Buffer
	if err := l.encs.proto(l.obj, &buf); err != nil {
		return nil, nil, fmt.Errorf("encode %s watch frame in protobuf: %w", l.typ, err)
	}
	out, err := ProtoWatchFrame(l.typ, buf.Bytes())
	if err != nil || l.encs.typeMeta == nil {
		return out, nil, err
	}
	return out, protoListItem(out), nil
}

// ProtoWatchFrame frames one event of a protobuf watch stream: the 4-byte
// big-endian length, then the metav1.WatchEvent whose object is raw, the
// object's protobuf encoding.
func ProtoWatchFrame(typ watch.EventType, raw []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}}
	n := ev.Size()
	out := make([]byte, 4+n)
	binary.BigEndian.PutUint32(out, uint32(n))
	if _, err := ev.MarshalToSizedBuffer(out[4:]); err != nil {
		return nil, fmt.Errorf("encode %s watch event: %w", typ, err)
	}
	return out, nil
}

// encodeJSON encodes objects that need no scheme (Status).
func encodeJSON(obj runtime.Object, w io.Writer) error {
	return json.NewEncoder(w).Encode(obj)
}

// errorFrame builds the ERROR frame carrying status, which has kind Status
// and apiVersion v1 on the wire, as kube-apiserver writes it.
func (c *Cache) errorFrame(status metav1.Status) Frame {
	if status.Kind == "" {
		status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	}
	return newLazyFrame(watch.Error, &status, &encoders{json: encodeJSON, proto: c.encs.proto}).frame(0)
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
	return newLazyFrame(watch.Bookmark, obj, &c.encs).frame(rev)
}
