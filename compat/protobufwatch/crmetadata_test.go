package protobufwatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metascheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// metaWidgetCRD is a namespaced CRD whose objects the test reads as
// metadata only.
const metaWidgetCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "metawidgets.compat.example.com"},
 "spec": {"group": "compat.example.com", "scope": "Namespaced",
  "names": {"plural": "metawidgets", "singular": "metawidget", "kind": "MetaWidget"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}`

// TestCustomResourceMetadataMatchesReference: custom resources, which have
// no protobuf form, are still served as PartialObjectMetadata(List) in
// protobuf to a metadata client (kube-apiserver lets the metadata views
// choose their media types), for Get, List and Watch, on both servers.
func TestCustomResourceMetadataMatchesReference(t *testing.T) {
	sameOnBoth(t, "custom resource metadata", crMetadataTranscript)
}

// crMetadataTranscript creates the MetaWidget CRD and one object in
// namespace "protobuf", and returns what a metadata client's Get, List
// and Watch of it receive.
func crMetadataTranscript(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON([]byte(metaWidgetCRD)); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	ensureNamespace(t, cfg, "protobuf")
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "compat.example.com", Version: "v1", Resource: "metawidgets"}).Namespace("protobuf")
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "compat.example.com/v1", "kind": "MetaWidget",
		"metadata": map[string]any{"name": "mw", "labels": map[string]any{"app": "meta"}}, "spec": map[string]any{"size": int64(3)}}}
	testwait.Until(t, 60*time.Second, "a MetaWidget created (the CRD established)", func() error {
		_, err := widgets.Create(ctx, w.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := cfg.Host + "/apis/compat.example.com/v1/namespaces/protobuf/metawidgets"
	get := func(url, accept string) string {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", accept)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		obj, _, err := metascheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		switch o := obj.(type) {
		case *metav1.PartialObjectMetadata:
			return fmt.Sprintf("%s %T name=%q labels=%v", out, o, o.Name, o.Labels)
		case *metav1.PartialObjectMetadataList:
			return fmt.Sprintf("%s %T items=%d first=%q", out, o, len(o.Items), o.Items[0].Name)
		}
		return fmt.Sprintf("%s %T %v", out, obj, err)
	}
	out := []string{
		get(base+"/mw", metadataWatchAccept),
		get(base, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"+
			"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"),
	}
	return append(out, rawMetadataWatch(t, hc, base+"?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")...)
}
