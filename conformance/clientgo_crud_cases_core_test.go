package conformance

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Objects of the CRUD rows: valid objects kube-apiserver v1.37.2 accepts
// (most as in its reference samples), one row per resource.

var crudPodSpec = corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}

func crudTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: crudPodSpec}
}

// crudMeta is the metadata of a row's object: in the rows' namespace when
// the kind is namespaced.
func crudMeta(name string, labels map[string]string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: labels}
	if namespaced {
		m.Namespace = crudNamespace
	}
	return m
}

// setByTest is a condition the rows write through status subresources.
func setByTest() metav1.Condition {
	return metav1.Condition{Type: "SetByTest", Status: metav1.ConditionTrue, Reason: "SetByTest", Message: "set by the test",
		LastTransitionTime: metav1.Now()}
}

func hasSetByTest(cs []metav1.Condition) bool {
	for _, c := range cs {
		if c.Type == "SetByTest" && c.Reason == "SetByTest" {
			return true
		}
	}
	return false
}

func coreCases() []crudCase {
	v1 := corev1.SchemeGroupVersion
	one := int32(1)
	gi := resource.MustParse("1Gi")
	return []crudCase{
		{
			gvr: v1.WithResource("namespaces"), kind: "Namespace",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Namespace{ObjectMeta: crudMeta(n, l, false)}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.Namespace).Status.Conditions = []corev1.NamespaceCondition{{
					Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse,
					Reason: "ContentDeleted", Message: "set by the test", LastTransitionTime: metav1.Now(),
				}}
			},
			statusSet: func(o runtime.Object) bool {
				c := o.(*corev1.Namespace).Status.Conditions
				return len(c) == 1 && c[0].Reason == "ContentDeleted"
			},
			subresources:      []string{"finalize"},
			statusKeepsLabels: true,
		},
		{
			gvr: v1.WithResource("pods"), kind: "Pod", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Pod{ObjectMeta: crudMeta(n, l, true), Spec: *crudPodSpec.DeepCopy()}
			},
			setStatus:         func(o runtime.Object) { o.(*corev1.Pod).Status.Message = "set by the test" },
			statusSet:         func(o runtime.Object) bool { return o.(*corev1.Pod).Status.Message == "set by the test" },
			subresources:      []string{"binding", "eviction", "ephemeralcontainers"},
			statusKeepsLabels: true,
		},
		{
			gvr: v1.WithResource("nodes"), kind: "Node",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Node{ObjectMeta: crudMeta(n, l, false)}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.Node).Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.8.7"}}
			},
			statusSet: func(o runtime.Object) bool {
				a := o.(*corev1.Node).Status.Addresses
				return len(a) == 1 && a[0].Address == "10.9.8.7"
			},
			statusKeepsLabels: true,
		},
		{
			gvr: v1.WithResource("services"), kind: "Service", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Service{ObjectMeta: crudMeta(n, l, true), Spec: corev1.ServiceSpec{
					Selector: map[string]string{"app": n}, Ports: []corev1.ServicePort{{Port: 80}},
				}}
			},
			setStatus:         func(o runtime.Object) { o.(*corev1.Service).Status.Conditions = []metav1.Condition{setByTest()} },
			statusSet:         func(o runtime.Object) bool { return hasSetByTest(o.(*corev1.Service).Status.Conditions) },
			statusKeepsLabels: true,
		},
		{
			gvr: v1.WithResource("configmaps"), kind: "ConfigMap", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.ConfigMap{ObjectMeta: crudMeta(n, l, true), Data: map[string]string{"k": "v"}}
			},
		},
		{
			gvr: v1.WithResource("secrets"), kind: "Secret", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Secret{ObjectMeta: crudMeta(n, l, true), Data: map[string][]byte{"k": []byte("v")}}
			},
		},
		{
			gvr: v1.WithResource("serviceaccounts"), kind: "ServiceAccount", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.ServiceAccount{ObjectMeta: crudMeta(n, l, true)}
			},
			subresources: []string{"token"},
		},
		{
			gvr: v1.WithResource("events"), kind: "Event", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Event{
					ObjectMeta:     crudMeta(n, l, true),
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: crudNamespace, Name: "p", APIVersion: "v1"},
					Reason:         "Tested", Message: "by client-go", Type: corev1.EventTypeNormal,
					Source: corev1.EventSource{Component: "conformance"}, Count: 1,
					FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
				}
			},
		},
		{
			gvr: v1.WithResource("endpoints"), kind: "Endpoints", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.Endpoints{ObjectMeta: crudMeta(n, l, true), Subsets: []corev1.EndpointSubset{{
					Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}},
					Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}},
				}}}
			},
		},
		{
			gvr: v1.WithResource("limitranges"), kind: "LimitRange", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.LimitRange{ObjectMeta: crudMeta(n, l, true), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
					Type:           corev1.LimitTypeContainer,
					Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
					DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}}}
			},
		},
		{
			gvr: v1.WithResource("resourcequotas"), kind: "ResourceQuota", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.ResourceQuota{ObjectMeta: crudMeta(n, l, true), Spec: corev1.ResourceQuotaSpec{
					Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("100")}}}
			},
			setStatus: func(o runtime.Object) {
				q := o.(*corev1.ResourceQuota)
				q.Status.Hard = corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("100")}
				q.Status.Used = corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("7")}
			},
			statusSet: func(o runtime.Object) bool {
				u := o.(*corev1.ResourceQuota).Status.Used[corev1.ResourceConfigMaps]
				return u.String() == "7"
			},
			statusKeepsLabels: true,
		},
		{
			gvr: v1.WithResource("persistentvolumes"), kind: "PersistentVolume",
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.PersistentVolume{ObjectMeta: crudMeta(n, l, false), Spec: corev1.PersistentVolumeSpec{
					Capacity:         corev1.ResourceList{corev1.ResourceStorage: gi},
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: "cg-crud-none",
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/cg-crud"}},
				}}
			},
			setStatus:           func(o runtime.Object) { o.(*corev1.PersistentVolume).Status.Message = "set by the test" },
			statusSet:           func(o runtime.Object) bool { return o.(*corev1.PersistentVolume).Status.Message == "set by the test" },
			statusKeepsLabels:   true,
			protectionFinalizer: "kubernetes.io/pv-protection",
		},
		{
			gvr: v1.WithResource("persistentvolumeclaims"), kind: "PersistentVolumeClaim", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				sc := "cg-crud-none"
				return &corev1.PersistentVolumeClaim{ObjectMeta: crudMeta(n, l, true), Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: &sc,
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: gi}},
				}}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.PersistentVolumeClaim).Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: gi}
			},
			statusSet: func(o runtime.Object) bool {
				c := o.(*corev1.PersistentVolumeClaim).Status.Capacity[corev1.ResourceStorage]
				return c.String() == "1Gi"
			},
			statusKeepsLabels:   true,
			protectionFinalizer: "kubernetes.io/pvc-protection",
		},
		{
			gvr: v1.WithResource("podtemplates"), kind: "PodTemplate", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				return &corev1.PodTemplate{ObjectMeta: crudMeta(n, l, true), Template: crudTemplate(n)}
			},
		},
		{
			gvr: v1.WithResource("replicationcontrollers"), kind: "ReplicationController", namespaced: true,
			newObj: func(n string, l map[string]string) runtime.Object {
				tmpl := crudTemplate(n)
				return &corev1.ReplicationController{ObjectMeta: crudMeta(n, l, true), Spec: corev1.ReplicationControllerSpec{
					Replicas: &one, Selector: map[string]string{"app": n}, Template: &tmpl}}
			},
			setStatus: func(o runtime.Object) {
				o.(*corev1.ReplicationController).Status.Replicas, o.(*corev1.ReplicationController).Status.FullyLabeledReplicas = 1, 1
			},
			statusSet: func(o runtime.Object) bool {
				return o.(*corev1.ReplicationController).Status.FullyLabeledReplicas == 1
			},
			subresources:      []string{"scale"},
			statusKeepsLabels: true,
			orphansByDefault:  true, // core/v1 replication controllers orphan their pods by default
		},
	}
}
