package rest_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

// TestMetadataOnlyInProtobuf: a metadata-only accessor of
// PartialObjectMetadata asks for it in protobuf first, as client-go's
// metadata client (even from a JSON client), and decodes the protobuf
// answers of Get, List and Watch, the watch's bookmarks included; an
// unstructured one, which protobuf cannot fill, asks for JSON.
func TestMetadataOnlyInProtobuf(t *testing.T) {
	ctx := context.Background()
	srv, _ := start(t, nil)
	var log mediaLog
	c := clientWith(t, srv, "", &log)
	if _, err := configMaps(c).Create(ctx, newCM("meta", map[string]string{"app": "m"}, map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	meta := rest.For[*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList](c, cmGVR, true).Namespace("default").MetadataOnly()
	log.reset()
	got, err := meta.Get(ctx, "meta", metav1.GetOptions{})
	if err != nil || got.Name != "meta" || got.Labels["app"] != "m" || got.UID == "" {
		t.Fatalf("metadata get: %#v %v", got, err)
	}
	list, err := meta.List(ctx, metav1.ListOptions{LabelSelector: "app=m"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "meta" || list.ResourceVersion == "" {
		t.Fatalf("metadata list: %#v %v", list, err)
	}
	w, err := meta.Watch(ctx, metav1.ListOptions{SendInitialEvents: new(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*metav1.PartialObjectMetadata).Name != "meta" {
		t.Fatalf("initial event: %s %#v", ev.Type, ev.Object)
	}
	ev := next(t, w)
	if bm, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
		t.Fatalf("initial-events-end bookmark: %s %#v", ev.Type, ev.Object)
	}
	accept, _, received := log.reset()
	want := []struct{ accept, received string }{
		{rest.AcceptPartialObjectMetadataProtobuf, rest.ContentTypeProtobuf},
		{rest.AcceptPartialObjectMetadataListProtobuf, rest.ContentTypeProtobuf},
		{rest.AcceptPartialObjectMetadataProtobuf, rest.ContentTypeProtobuf + ";stream=watch"},
	}
	for i, w := range want {
		if i >= len(accept) || accept[i] != w.accept || received[i] != w.received {
			t.Fatalf("requests: accept %q, answered %q; want %+v", accept, received, want)
		}
	}

	u, err := rest.Dynamic(c, cmGVR, true).Namespace("default").MetadataOnly().Get(ctx, "meta", metav1.GetOptions{})
	if err != nil || u.GetName() != "meta" || u.GetKind() != "PartialObjectMetadata" {
		t.Fatalf("unstructured metadata get: %v %v", u, err)
	}
	if accept, _, received := log.reset(); accept[0] != rest.AcceptPartialObjectMetadata || received[0] != "application/json" {
		t.Errorf("unstructured metadata get: accept %q, answered %q", accept[0], received[0])
	}
}
