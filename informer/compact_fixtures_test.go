package informer

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serverPod is pod i of a Deployment-like workload, shaped as the API
// server returns it (defaults filled in): apps pods of one app share
// their spec, labels and owner reference; name, uid, IPs and container id
// are the pod's own. volumeSuffix names the service-account volume; real
// clusters give every pod its own.
func serverPod(i int, volumeSuffix string) *corev1.Pod {
	app := "app-" + strconv.Itoa(i%50)
	hash := "5d8f7c9b" + strconv.Itoa(i%50)
	rs := app + "-" + hash
	start := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Local())
	created := metav1.NewTime(time.Date(2026, 11, 21, 14, 8, i%60, 0, time.UTC).Local())
	vol := "kube-api-access-" + volumeSuffix
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%100), Name: rs + "-" + strconv.Itoa(i),
			UID:             types.UID(fmt.Sprintf("b2dc0f5f-e7d7-4b61-b5f4-%012d", i)),
			ResourceVersion: strconv.Itoa(3000 + i), Generation: 1, CreationTimestamp: created,
			Labels: map[string]string{"app": app, "pod-template-hash": hash, "tier": "backend"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("6f1b3c2e-0000-4000-8000-%012d", i%50)), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-" + strconv.Itoa(i%100), ServiceAccountName: "default", DNSPolicy: corev1.DNSClusterFirst,
			EnableServiceLinks: ptr(true), RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}, TerminationGracePeriodSeconds: ptr(int64(30)),
			Containers: []corev1.Container{{
				Name: "server", Image: "registry.example.com/team/" + app + ":1.27.3", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz",
					Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}}, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				VolumeMounts: []corev1.VolumeMount{{Name: vol, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			}},
			Volumes: []corev1.Volume{{Name: vol, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(420)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0." + strconv.Itoa(i%100), PodIP: fmt.Sprintf("10.244.%d.%d", (i/250)%256, i%250+1),
			StartTime: &start, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: start},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "server", Ready: true, Started: ptr(true), Image: "registry.example.com/team/" + app + ":1.27.3",
				ImageID:     "registry.example.com/team/" + app + "@sha256:4c2f1f3ad9b0e1c7a8f05c1b7f0e4b1d5e6a2c3b4d5e6f708192a3b4c5d6e7f8",
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}},
			}},
		},
	}
}

func ptr[V any](v V) *V { return &v }

// variedObjects returns objects of many shapes, with near-duplicates that
// differ in one deep place, for the compaction tests.
func variedObjects() []any {
	var objs []any
	for i := range 12 {
		objs = append(objs, serverPod(i%4, "x7k2p"))
	}
	odd := serverPod(1, "x7k2p")
	odd.Spec.Containers[0].Env[0].Value = "debug"                                                     // one deep string
	odd.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")         // same amount, other form
	odd.Spec.Tolerations = []corev1.Toleration{}                                                      // empty, not nil
	odd.Spec.Containers[0].Ports[0].ContainerPort = 8081                                              // one deep number
	odd.Status.ContainerStatuses[0].Started = ptr(false)                                              // one pointed-to bool
	odd.Labels = map[string]string{"app": "app-1", "pod-template-hash": "5d8f7c9b1", "tier": "front"} // one map value
	objs = append(objs, odd, serverPod(2, "a9zq1"), serverPod(3, "b8yp2"))
	for i := range 6 {
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Namespace: "default", Annotations: map[string]string{"a": "b"}},
			Data:       map[string]string{"k": strconv.Itoa(i % 2)}, BinaryData: map[string][]byte{"b": []byte{byte(i % 2), 0, 1}},
		})
	}
	objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "default",
		Labels: map[string]string{}}, BinaryData: map[string][]byte{"nil": nil, "empty": {}}})
	for i := range 4 {
		objs = append(objs, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "svc-" + strconv.Itoa(i), Namespace: "default"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: []intstr.IntOrString{
				intstr.FromInt32(8080), intstr.FromString("8080"), intstr.FromString("http"), intstr.FromInt32(80)}[i]}},
				Selector: map[string]string{"app": "web"}},
		})
	}
	for i := range 3 {
		objs = append(objs, &schemaNode{Name: "root", Children: []schemaNode{
			{Name: "replicas", Min: ptr(float64(i - 1)), Attrs: map[string]schemaNode{"zero": {Name: "z", Min: ptr(negZero(i))}}},
			{Name: "replicas", Min: ptr(float64(i - 1)), Extra: []any{int64(1), "1", 1.0, nil, true, int32(1)}},
		}})
	}
	return append(objs, unstructuredObjects()...)
}

// schemaNode is a recursive type with floats and interfaces, like
// apiextensions' JSONSchemaProps.
type schemaNode struct {
	Name     string
	Min      *float64
	Children []schemaNode
	Attrs    map[string]schemaNode
	Extra    []any
}

// negZero is 0 for even i and -0 for odd ones.
func negZero(i int) float64 {
	z := 0.0
	if i%2 == 1 {
		z = -z
	}
	return z
}

// unstructuredObjects decodes JSON the way the dynamic client does, so the
// values have the decoder's types (int64, float64, bool, nil, maps and
// slices of any).
func unstructuredObjects() []any {
	docs := []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default","labels":{"app":"w"}},"spec":{"size":3,"ratio":0.5,"on":true,"none":null,"tags":["a","b"],"nested":{"list":[{"x":1},{"x":1.0}]}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2","namespace":"default","labels":{"app":"w"}},"spec":{"size":3,"ratio":0.5,"on":true,"none":null,"tags":["a","b"],"nested":{"list":[{"x":1},{"x":1.0}]}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w3","namespace":"default","labels":{"app":"w"}},"spec":{"size":3.0,"ratio":-0.0,"on":false,"none":"","tags":["a","b",""],"nested":{"list":[{"x":1.0},{"x":1}]}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w4","namespace":"default","labels":{}},"spec":{"size":"3","ratio":0,"on":"true","tags":[],"nested":{"list":[]}}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w5","namespace":"default","labels":{"app":"w"}},"spec":{"size":3,"ratio":0.5,"on":true,"none":null,"tags":["a","b"],"nested":{"list":[{"x":1},{"x":1.0}]}}}`,
	}
	var objs []any
	for _, d := range docs {
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(d), nil, nil)
		if err != nil {
			panic(fmt.Sprintf("decode %s: %v", d, err))
		}
		objs = append(objs, obj)
	}
	return objs
}
