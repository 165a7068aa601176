package apiserver_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/scheme"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// protoBody encodes obj as client-go's clientset does for built-in kinds:
// Kubernetes' protobuf envelope.
func protoBody(t *testing.T, obj runtime.Object) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := scheme.New().Proto.Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

// TestProtobufOptionBodies: DeleteOptions, Scale and Binding bodies are
// accepted in protobuf (client-go's typed clientset sends them so), not
// only JSON.
func TestProtobufOptionBodies(t *testing.T) {
	s, _ := start(t, nil)
	js := "application/json"
	do := func(method, path, ctype string, body *bytes.Reader, want int) []byte {
		t.Helper()
		r := body
		if r == nil {
			r = bytes.NewReader(nil)
		}
		code, out, _ := s.Do(t, method, path, ctype, r)
		if code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, want)
		}
		return out
	}

	// DeleteOptions with a uid precondition, in protobuf
	out := do("POST", cmPath, js, bytes.NewReader([]byte(`{"metadata":{"name":"pb"}}`)), 201)
	uid := decode[struct {
		Metadata struct{ UID string } `json:"metadata"`
	}](t, out).Metadata.UID
	wrong, right := types.UID("wrong-uid"), types.UID(uid)
	opts := &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}}
	opts.Preconditions = &metav1.Preconditions{UID: &wrong}
	do("DELETE", cmPath+"/pb", protobufType, protoBody(t, opts), 409)
	opts.Preconditions.UID = &right
	do("DELETE", cmPath+"/pb", protobufType, protoBody(t, opts), 200)
	do("GET", cmPath+"/pb", "", nil, 404)

	// Scale in protobuf
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1,
	"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},
	"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	const deployPath = "/apis/apps/v1/namespaces/default/deployments"
	do("POST", deployPath, js, bytes.NewReader([]byte(deploy)), 201)
	sc := &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}}
	do("PUT", deployPath+"/d/scale", protobufType, protoBody(t, sc), 200)
	d := decode[appsv1.Deployment](t, do("GET", deployPath+"/d", "", nil, 200))
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 5 {
		t.Fatalf("replicas after a protobuf Scale: %v", d.Spec.Replicas)
	}

	// Binding in protobuf
	const podPath = "/api/v1/namespaces/default/pods"
	do("POST", podPath, js, bytes.NewReader([]byte(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)), 201)
	b := &corev1.Binding{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Binding"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}
	do("POST", podPath+"/p/binding", protobufType, protoBody(t, b), 201)
	p := decode[corev1.Pod](t, do("GET", podPath+"/p", "", nil, 200))
	if p.Spec.NodeName != "n1" {
		t.Fatalf("nodeName after a protobuf Binding: %q", p.Spec.NodeName)
	}
}

// TestNamespacesHaveNoDeleteCollection: as kube-apiserver, namespaces do
// not advertise deletecollection and DELETE on their collection is 405
// (deleting every namespace, kube-system included, with one request).
func TestNamespacesHaveNoDeleteCollection(t *testing.T) {
	s, _ := start(t, nil)
	code, body, _ := s.Do(t, http.MethodDelete, "/api/v1/namespaces", "", nil)
	if code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE /api/v1/namespaces: %d %s", code, body)
	}
	if code, _, _ := s.Do(t, http.MethodGet, "/api/v1/namespaces/kube-system", "", nil); code != http.StatusOK {
		t.Fatalf("kube-system after the refused deletecollection: %d", code)
	}
	code, body, _ = s.Do(t, http.MethodGet, "/api/v1", "", nil)
	if code != http.StatusOK {
		t.Fatal(code)
	}
	list := decode[metav1.APIResourceList](t, body)
	for _, r := range list.APIResources {
		verbs := strings.Join(r.Verbs, ",")
		switch r.Name {
		case "namespaces":
			if verbs != "create,delete,get,list,patch,update,watch" {
				t.Errorf("namespaces verbs %s", verbs)
			}
		case "pods", "configmaps":
			if !strings.Contains(verbs, "deletecollection") {
				t.Errorf("%s verbs %s", r.Name, verbs)
			}
		}
	}
	code, body, _ = s.Do(t, http.MethodGet, "/openapi/v2", "", nil)
	if code != http.StatusOK {
		t.Fatal(code)
	}
	if bytes.Contains(body, []byte(`"deleteCoreV1CollectionNamespace"`)) {
		t.Error("OpenAPI v2 still has deleteCoreV1CollectionNamespace")
	}
	if !bytes.Contains(body, []byte(`"deleteCoreV1CollectionNamespacedPod"`)) {
		t.Error("OpenAPI v2 lost deleteCoreV1CollectionNamespacedPod")
	}
}
