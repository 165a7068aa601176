package watchcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// TestProtoFramesSharedAndLazy: the protobuf form of a frame is encoded
// only when a watcher asks for it, once for every watcher receiving the
// frame, and is kube-apiserver's frame: a 4-byte big-endian length, then
// a metav1.WatchEvent whose object is the protobuf serializer's encoding.
func TestProtoFramesSharedAndLazy(t *testing.T) {
	codecs := scheme.New()
	var encodes atomic.Int32
	e := newEnv(t, configMaps, func(c *Config) {
		c.EncodeProto = func(obj k8sruntime.Object, w io.Writer) error {
			encodes.Add(1)
			return codecs.Proto.Encode(obj, w)
		}
	}, nil)
	from := e.sync()
	w1 := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	w2 := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	f1, _ := next(t, w1)
	f2, _ := next(t, w2)
	if _, err := f1.Bytes(); err != nil {
		t.Fatal(err)
	}
	if n := encodes.Load(); n != 0 {
		t.Fatalf("%d protobuf encodings before any protobuf watcher asked", n)
	}
	p1, err := f1.ProtoBytes()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := f2.ProtoBytes()
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(p1) != unsafe.SliceData(p2) || encodes.Load() != 1 {
		t.Fatalf("protobuf frames not shared: %d encodings", encodes.Load())
	}
	if n := binary.BigEndian.Uint32(p1); int(n) != len(p1)-4 {
		t.Fatalf("frame length %d, frame of %d bytes", n, len(p1)-4)
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(p1[4:]); err != nil || ev.Type != string(watch.Added) || !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
		t.Fatalf("frame: %v %s %q", err, ev.Type, ev.Object.Raw)
	}
	obj, _, err := codecs.Proto.Decode(ev.Object.Raw, nil, nil)
	if cm, ok := obj.(*corev1.ConfigMap); err != nil || !ok || cm.Name != "k" || cm.Data["v"] != "0" {
		t.Fatalf("frame object: %v %#v", err, obj)
	}
}

// TestProtoBytesWithoutEncoder: a cache without EncodeProto (custom
// resources) fails ProtoBytes with ErrNoProtobuf; its JSON frames work.
func TestProtoBytesWithoutEncoder(t *testing.T) {
	e := newEnv(t, configMaps, nil, nil)
	from := e.sync()
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: from})
	e.create(cmKey("a", "k"), configMap("a", "k", nil, "0"))
	f, _ := next(t, w)
	if _, err := f.ProtoBytes(); !errors.Is(err, ErrNoProtobuf) {
		t.Fatalf("ProtoBytes without an encoder: %v", err)
	}
	if _, err := f.Bytes(); err != nil {
		t.Fatal(err)
	}
}
