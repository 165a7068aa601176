package watchcache

import (
	"bytes"
	"encoding/json"
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

// TestListItemsShareFrames: the list item forms of ListItems are the
// objects' encodings without kind and apiVersion (JSON) or envelope
// (protobuf), made once per object state and format whoever asks first
// (a list, or a watcher's frame), and shared with the watch frames.
func TestListItemsShareFrames(t *testing.T) {
	codecs := scheme.New()
	var jsonEncodes, protoEncodes atomic.Int32
	e := newEnv(t, configMaps, func(c *Config) {
		c.Encode = func(obj k8sruntime.Object, w io.Writer) error {
			jsonEncodes.Add(1)
			return codecs.JSON.Encode(obj, w)
		}
		c.EncodeProto = func(obj k8sruntime.Object, w io.Writer) error {
			protoEncodes.Add(1)
			return codecs.Proto.Encode(obj, w)
		}
	}, nil)
	for _, name := range []string{"a", "b", "c"} {
		e.create(cmKey("ns", name), configMap("ns", name, map[string]string{"x": "<&>"}, "v "+name))
	}
	rev := e.sync()

	check := func(round string) {
		t.Helper()
		items, _, err := e.cache.ListItems(ListOptions{})
		if err != nil || len(items) != 3 {
			t.Fatalf("%s: ListItems: %d items, %v", round, len(items), err)
		}
		for _, it := range items {
			cm := *it.Object().(*corev1.ConfigMap)
			cm.TypeMeta = metav1.TypeMeta{} // as in a list of a built-in kind
			wantJSON, err := json.Marshal(&cm)
			if err != nil {
				t.Fatal(err)
			}
			rest, err := it.ListJSON()
			if err != nil || !bytes.Equal(append([]byte("{"), rest...), wantJSON) {
				t.Fatalf("%s: %s: ListJSON %q, %v; want %q", round, cm.Name, rest, err, wantJSON)
			}
			wantProto, err := cm.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if got, err := it.ListProto(); err != nil || !bytes.Equal(got, wantProto) {
				t.Fatalf("%s: %s: ListProto %q, %v; want %q", round, cm.Name, got, err, wantProto)
			}
		}
	}
	check("first list")
	check("second list")
	if j, p := jsonEncodes.Load(), protoEncodes.Load(); j != 3 || p != 3 {
		t.Fatalf("after two lists of 3 objects: %d JSON and %d protobuf encodings, want 3 and 3", j, p)
	}

	// A watcher's MODIFIED frame is the new state's encoding: a list after
	// it encodes nothing, and its item is part of the frame's bytes.
	w := e.watch(WatchOptions{Mode: FromRevision, ResourceVersion: rev})
	e.update(cmKey("ns", "b"), configMap("ns", "b", nil, "changed"))
	frame, ok := next(t, w)
	if !ok || frame.Type != watch.Modified {
		t.Fatalf("watch: %v %s, want MODIFIED", ok, frame.Type)
	}
	b, err := frame.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	pb, err := frame.ProtoBytes()
	if err != nil {
		t.Fatal(err)
	}
	j, p := jsonEncodes.Load(), protoEncodes.Load()
	check("after an update")
	if jsonEncodes.Load() != j || protoEncodes.Load() != p {
		t.Fatalf("a list after a MODIFIED frame encoded again: %d JSON, %d protobuf encodings, want %d, %d",
			jsonEncodes.Load(), protoEncodes.Load(), j, p)
	}
	items, _, _ := e.cache.ListItems(ListOptions{})
	rest, _ := items[1].ListJSON()
	raw, _ := items[1].ListProto()
	if !within(rest, b) || !within(raw, pb) {
		t.Fatal("the updated item's list forms are not the MODIFIED frame's bytes")
	}
}

// within reports whether sub lies inside the memory of b.
func within(sub, b []byte) bool {
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))+uintptr(len(b))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return len(sub) > 0 && p >= start && p+uintptr(len(sub)) <= end
}
