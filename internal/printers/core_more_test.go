package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestPersistentVolumeRows(t *testing.T) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv1", CreationTimestamp: ago(time.Hour),
			Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "beta"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: quantities("storage", "5Gi"), StorageClassName: "ignored", VolumeMode: new(corev1.PersistentVolumeBlock),
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "ns", Name: "data"},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Reason: "r"},
	}
	expectRow(t, "", "PersistentVolume", pv, "pv1", "5Gi", "RWO,RWOP", "Delete", "Bound", "ns/data", "beta", "<unset>", "r", "60m", "Block")
	pv.DeletionTimestamp = &metav1.Time{Time: clock()}
	pv.Spec.VolumeAttributesClassName = new("gold")
	pv.Spec.VolumeMode = nil
	expectRow(t, "", "PersistentVolume", pv, "pv1", "5Gi", "RWO,RWOP", "Delete", "Terminating", "ns/data", "beta", "gold", "r", "60m", "<unset>")

	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: meta("data", 2*time.Minute),
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: new("fast"), VolumeMode: new(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{Requests: quantities("storage", "1Gi")}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending, Capacity: quantities("storage", "2Gi"),
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}},
	}
	expectRow(t, "", "PersistentVolumeClaim", pvc, "data", "Pending", "", "", "", "fast", "<unset>", "2m", "Filesystem")
	pvc.Spec.VolumeName, pvc.Status.Phase = "pv1", corev1.ClaimBound
	expectRow(t, "", "PersistentVolumeClaim", pvc, "data", "Bound", "pv1", "2Gi", "RWX", "fast", "<unset>", "2m", "Filesystem")
}

func TestResourceQuotaAndLimitRangeRows(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: meta("q", 10*time.Second), Status: corev1.ResourceQuotaStatus{
		Hard: quantities("pods", "10", "limits.memory", "2Gi", "requests.cpu", "1", "limits.cpu", "2"),
		Used: quantities("pods", "1", "requests.cpu", "500m"),
	}}
	expectRow(t, "", "ResourceQuota", q, "q", "pods: 1/10, requests.cpu: 500m/1", "limits.cpu: 0/2, limits.memory: 0/2Gi", "10s")
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	expectRow(t, "", "LimitRange", &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l", CreationTimestamp: metav1.NewTime(created)}},
		"l", "2026-01-02T03:04:05Z")
}

func TestWorkloadRows(t *testing.T) {
	tmpl := template("nginx", "envoy")
	tmpl.Labels = map[string]string{"app": "web"}
	expectRow(t, "", "ReplicationController", &corev1.ReplicationController{
		ObjectMeta: meta("rc", time.Minute),
		Spec:       corev1.ReplicationControllerSpec{Replicas: new(int32(3)), Selector: map[string]string{"app": "web"}, Template: &tmpl},
		Status:     corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1},
	}, "rc", int64(3), int64(2), int64(1), "60s", "c0,c1", "nginx,envoy", "app=web")
	expectRow(t, "", "ReplicationController", &corev1.ReplicationController{ObjectMeta: meta("bare", time.Minute)},
		"bare", int64(0), int64(0), int64(0), "60s", "", "", "<none>")
	expectRow(t, "", "PodTemplate", &corev1.PodTemplate{ObjectMeta: meta("t", time.Minute), Template: tmpl},
		"t", "c0,c1", "nginx,envoy", "app=web")
	expectRow(t, "", "ServiceAccount", &corev1.ServiceAccount{ObjectMeta: meta("sa", 5*time.Hour)}, "sa", "5h")
}

func TestEndpointsRows(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	for name, c := range map[string]struct {
		subsets []corev1.EndpointSubset
		want    string
	}{
		"none":      {nil, "<none>"},
		"not ready": {[]corev1.EndpointSubset{{NotReadyAddresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Port: 80}}}}, ""},
		"headless":  {[]corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2")}}, "10.0.0.1,10.0.0.2"},
		"ipv6":      {[]corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "[fd00::1]:80"},
		"more": {[]corev1.EndpointSubset{
			{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}},
			{Addresses: addrs("10.0.1.1"), Ports: []corev1.EndpointPort{{Port: 8080}}},
		}, "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more..."},
	} {
		t.Run(name, func(t *testing.T) {
			expectRow(t, "", "Endpoints", &corev1.Endpoints{ObjectMeta: meta("e", time.Minute), Subsets: c.subsets}, "e", c.want, "60s")
		})
	}
}

func TestComponentStatusRows(t *testing.T) {
	cs := &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"}}
	expectRow(t, "", "ComponentStatus", cs, "etcd-0", "Unknown", "", "")
	cs.Conditions = []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Message: "m", Error: "e"}}
	expectRow(t, "", "ComponentStatus", cs, "etcd-0", "Unhealthy", "m", "e")
	cs.Conditions[0].Status = corev1.ConditionTrue
	expectRow(t, "", "ComponentStatus", cs, "etcd-0", "Healthy", "m", "e")
}

// TestFixedRows: what kube-apiserver prints and these printers once did
// not: the node's architecture with its kernel, load balancer addresses
// sorted and each once, the failed container of a pod whose first one
// completed, and the Completed row condition of finished pods.
func TestFixedRows(t *testing.T) {
	n := &corev1.Node{ObjectMeta: meta("n", time.Hour), Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{
		KernelVersion: "6.1", Architecture: "arm64"}}}
	expectRow(t, "", "Node", n, "n", "Unknown", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "6.1 (arm64)", "<unknown>")

	lb := &corev1.Service{ObjectMeta: meta("lb", time.Hour), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
		ClusterIPs: []string{"10.0.0.1"}, ExternalIPs: []string{"1.1.1.1"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "9.9.9.9"}, {Hostname: "a.example.com"}, {IP: "9.9.9.9"}}}}}
	expectRow(t, "", "Service", lb, "lb", "LoadBalancer", "10.0.0.1", "9.9.9.9,a.example.com,1.1.1.1", "<none>", "60m", "<none>")

	p := &corev1.Pod{ObjectMeta: meta("p", time.Hour),
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}},
		}}}
	expectRow(t, "", "Pod", p, "p", "0/2", "Error", "0", "60m", "<none>", "<none>", "<none>", "<none>")
	rc := ForClock("", "Pod", clock).(registry.RowConditioner)
	if got := rc.RowConditions(p); len(got) != 1 || got[0].Type != metav1.RowCompleted || got[0].Reason != "Failed" || got[0].Message != "The pod failed." {
		t.Errorf("row conditions of a failed pod: %+v", got)
	}
	p.Status.Phase = corev1.PodRunning
	if got := rc.RowConditions(p); got != nil {
		t.Errorf("row conditions of a running pod: %+v", got)
	}
}
