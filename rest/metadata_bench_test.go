package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/scheme"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// BenchmarkWatchEventDecode measures what a watcher of every resource (the
// garbage collector's monitors) pays per event of a running pod, through
// the client's own watch decoder: the whole pod as unstructured JSON (how
// the monitors watched before they were metadata-only), metadata only
// in JSON, and metadata only in protobuf (client-go's metadata client's
// choice, and the monitors' now).
func BenchmarkWatchEventDecode(b *testing.B) {
	codecs := scheme.New()
	pod := benchPod()
	var full bytes.Buffer
	if err := codecs.JSON.Encode(pod, &full); err != nil {
		b.Fatal(err)
	}
	pom := &metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta}
	pom.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
	var pomJSON, pomProto bytes.Buffer
	if err := codecs.JSON.Encode(pom, &pomJSON); err != nil {
		b.Fatal(err)
	}
	if err := codecs.Proto.Encode(pom, &pomProto); err != nil {
		b.Fatal(err)
	}
	protoFrame, err := watchcache.ProtoWatchFrame(watch.Modified, pomProto.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name   string
		frame  []byte
		proto  bool
		decode func([]byte) (runtime.Object, error)
	}{
		{"unstructured-json", jsonLine(b, full.Bytes()), false, func(raw []byte) (runtime.Object, error) {
			return decodeInto(unstructured.UnstructuredJSONScheme, raw, func() *unstructured.Unstructured { return &unstructured.Unstructured{} })
		}},
		{"metadata-json", jsonLine(b, pomJSON.Bytes()), false, func(raw []byte) (runtime.Object, error) {
			return decodeInto(codecs.JSON, raw, func() *metav1.PartialObjectMetadata { return &metav1.PartialObjectMetadata{} })
		}},
		{"metadata-protobuf", protoFrame, true, func(raw []byte) (runtime.Object, error) {
			return decodeInto(codecs.Proto, raw, func() *metav1.PartialObjectMetadata { return &metav1.PartialObjectMetadata{} })
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.frame)))
			ctx, cancel := context.WithCancel(context.Background())
			body := io.NopCloser(&repeatReader{frame: c.frame, left: b.N})
			w := newStreamWatcher(ctx, cancel, body, c.proto, c.decode, func([]byte) (*metav1.Status, error) { return nil, nil })
			defer w.Stop()
			b.ResetTimer()
			n := 0
			for ev := range w.ResultChan() {
				if ev.Type != watch.Modified {
					b.Fatalf("event %d: %s %v", n, ev.Type, ev.Object)
				}
				n++
			}
			if n != b.N {
				b.Fatalf("%d events, want %d", n, b.N)
			}
		})
	}
}

// jsonLine is the JSON watch stream's line of a MODIFIED event of obj.
func jsonLine(b *testing.B, obj []byte) []byte {
	line, err := json.Marshal(metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: bytes.TrimSpace(obj)}})
	if err != nil {
		b.Fatal(err)
	}
	return append(line, '\n')
}

// repeatReader reads frame left times over.
type repeatReader struct {
	frame []byte
	off   int
	left  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.frame[r.off:])
	r.off += n
	if r.off == len(r.frame) {
		r.off, r.left = 0, r.left-1
	}
	return n, nil
}

// benchPod is a running pod as a Deployment's ReplicaSet makes it and a
// kubelet reports it: labels, an owner, managed fields, two containers
// and their statuses.
func benchPod() *corev1.Pod {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ctrl := true
	labels := map[string]string{"app": "web", "pod-template-hash": "5d8f7c9b6"}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f7c9b6-x7k2p", GenerateName: "web-5d8f7c9b6-", Namespace: "default",
			UID: "0c6f6a3e-7c1d-4b7e-9a51-3f0f2d6b8e11", ResourceVersion: "123456", CreationTimestamp: now, Labels: labels,
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f7c9b6",
				UID: "6b1e2a44-1d3f-4c1a-8f7e-2b9c0d5e4a33", Controller: &ctrl, BlockOwnerDeletion: &ctrl}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"6b1e2a44-1d3f-4c1a-8f7e-2b9c0d5e4a33\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{}}}}}`)}},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now, Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}}`)}},
			}},
		Spec: corev1.PodSpec{NodeName: "node-3", ServiceAccountName: "default", RestartPolicy: corev1.RestartPolicyAlways,
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.3", PodIP: "10.244.3.17", StartTime: &now},
	}
	for i, name := range []string{"web", "sidecar"} {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name, Image: "registry.example/" + name + ":1.2.3",
			Ports: []corev1.ContainerPort{{ContainerPort: int32(8080 + i), Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}, {Name: "REPLICA", Value: fmt.Sprint(i)}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
			VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, Ready: true,
			Image: "registry.example/" + name + ":1.2.3", ImageID: "registry.example/" + name + "@sha256:0123456789abcdef",
			ContainerID: "containerd://" + fmt.Sprint(1000+i), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	return pod
}
