package protobufwatch

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metascheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// metadataWatchAccept is the Accept of client-go's metadata client's
// watches (k8s.io/client-go/metadata, v0.37.2).
const metadataWatchAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// TestMetadataWatchMatchesReference: a metadata-only watch (client-go's
// metadata client's Accept, with allowWatchBookmarks) is answered in
// protobuf on both servers, and its events, the bookmark ending the
// initial events included, carry PartialObjectMetadata in the same
// envelope; client-go's metadata client decodes them alike.
func TestMetadataWatchMatchesReference(t *testing.T) {
	sameOnBoth(t, "metadata watch streams", metadataWatchTranscript)
}

// metadataWatchTranscript creates a ConfigMap in namespace "protobuf" and
// returns what a metadata-only watch of it carries (rawMetadataWatch),
// then the same two events as client-go's metadata client hands them out.
func metadataWatchTranscript(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := "protobuf"
	ensureNamespace(t, cfg, ns)
	cms := cs.CoreV1().ConfigMaps(ns)
	_ = cms.Delete(ctx, "pb-meta", metav1.DeleteOptions{})
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pb-meta", Labels: map[string]string{"app": "meta"}},
		Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cms.Delete(context.Background(), "pb-meta", metav1.DeleteOptions{}) })
	opts := metav1.ListOptions{FieldSelector: "metadata.name=pb-meta", AllowWatchBookmarks: true,
		SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := rawMetadataWatch(t, hc, cfg.Host+"/api/v1/namespaces/"+ns+"/configmaps?watch=true&fieldSelector=metadata.name%3Dpb-meta"+
		"&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")

	// client-go's metadata client.
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).Watch(wctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for range 2 {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatal("the metadata client's watch ended")
		}
		out = append(out, "metadata client: "+describeMetadataEvent(ev.Type, ev.Object))
	}
	return out
}

// describeMetadataEvent names an event's type and object type and, for
// metadata, its name, labels and annotations (what is the same on both
// servers).
func describeMetadataEvent(typ watch.EventType, obj runtime.Object) string {
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return fmt.Sprintf("%s %T", typ, obj)
	}
	return fmt.Sprintf("%s %T %s name=%q labels=%v annotations=%v", typ, obj, p.GetObjectKind().GroupVersionKind(), p.Name, p.Labels, p.Annotations)
}

// rawMetadataWatch opens the watch url with the metadata client's Accept
// and returns the answer's status and Content-Type, then its first two
// events (the initial event and the initial-events-end bookmark) as
// client-go's metadata client decodes a stream, with their envelopes.
func rawMetadataWatch(t *testing.T, hc *http.Client, url string) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", metadataWatchAccept)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := []string{fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))}
	// The metadata client's scheme: meta.k8s.io's types.
	raw := protobuf.NewRawSerializer(metascheme.Scheme, metascheme.Scheme)
	frames := &frameRecorder{r: protobuf.LengthDelimitedFramer.NewFrameReader(resp.Body)}
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, raw), metascheme.Codecs.UniversalDeserializer())
	for range 2 {
		typ, obj, err := dec.Decode()
		if err != nil {
			t.Fatalf("client-go's decoder: %v", err)
		}
		out = append(out, describeMetadataEvent(typ, obj)+" "+frames.shape())
	}
	return out
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(t *testing.T, cfg *rest.Config, ns string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
