package printers

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// expectRow renders obj with the convertor of group/kind and compares the
// whole row.
func expectRow(t *testing.T, group, kind string, obj runtime.Object, want ...interface{}) {
	t.Helper()
	tc := ForClock(group, kind, clock)
	if tc == nil {
		t.Fatalf("no convertor for %s/%s", group, kind)
	}
	cells, err := tc.Cells(obj)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%#v", cells) != fmt.Sprintf("%#v", want) {
		t.Errorf("%s row\n got %#v\nwant %#v", kind, cells, want)
	}
	if len(tc.Columns()) != len(cells) {
		t.Errorf("%s: %d columns, %d cells", kind, len(tc.Columns()), len(cells))
	}
}

func meta(name string, age time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(age)}
}

func template(images ...string) corev1.PodTemplateSpec {
	var cs []corev1.Container
	for i, img := range images {
		cs = append(cs, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: img})
	}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}
}

func TestDeploymentAndReplicaSetRows(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	expectRow(t, "apps", "Deployment", &appsv1.Deployment{
		ObjectMeta: meta("web", 3*24*time.Hour),
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(3)), Selector: sel, Template: template("nginx", "envoy:1")},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}, "web", "2/3", int64(3), int64(2), "3d", "c0,c1", "nginx,envoy:1", "app=web")
	expectRow(t, "apps", "ReplicaSet", &appsv1.ReplicaSet{
		ObjectMeta: meta("web-5d4f", 45*time.Second),
		Spec:       appsv1.ReplicaSetSpec{Selector: sel, Template: template("nginx")},
		Status:     appsv1.ReplicaSetStatus{Replicas: 1, ReadyReplicas: 0},
	}, "web-5d4f", int64(1), int64(1), int64(0), "45s", "c0", "nginx", "app=web")
}

func TestServiceRows(t *testing.T) {
	svc := func(typ corev1.ServiceType, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: meta("web", 10*time.Minute), Spec: corev1.ServiceSpec{
			Type: typ, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
			Selector: map[string]string{"app": "web"},
		}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	expectRow(t, "", "Service", svc(corev1.ServiceTypeClusterIP, nil),
		"web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "10m", "app=web")
	expectRow(t, "", "Service", svc(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30053})
	}), "web", "NodePort", "10.96.0.10", "<none>", "80/TCP,53:30053/UDP", "10m", "app=web")
	expectRow(t, "", "Service", svc(corev1.ServiceTypeLoadBalancer, nil),
		"web", "LoadBalancer", "10.96.0.10", "<pending>", "80/TCP", "10m", "app=web")
	expectRow(t, "", "Service", svc(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}
	}), "web", "LoadBalancer", "10.96.0.10", "192.0.2.1,lb.example.com", "80/TCP", "10m", "app=web")
	expectRow(t, "", "Service", svc(corev1.ServiceTypeExternalName, func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Ports, s.Spec.Selector = "", nil, nil, nil
		s.Spec.ExternalName = "db.example.com"
	}), "web", "ExternalName", "<none>", "db.example.com", "<none>", "10m", "<none>")
	expectRow(t, "", "Service", svc(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
	}), "web", "ClusterIP", "None", "<none>", "80/TCP", "10m", "app=web")
}

func TestNodeRows(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-1", CreationTimestamp: ago(400 * 24 * time.Hour), Labels: map[string]string{
			"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": "", "kubernetes.io/role": "master"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.1.10"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.0", OSImage: "Debian", ContainerRuntimeVersion: "containerd://2.0"},
		},
	}
	expectRow(t, "", "Node", node, "cp-1", "Ready", "control-plane,etcd,master", "400d", "v1.32.0",
		"192.168.1.10", "<none>", "Debian", "<unknown>", "containerd://2.0")
	node.Status.Conditions[0].Status = corev1.ConditionUnknown
	node.Spec.Unschedulable = true
	node.Labels = nil
	cells, _ := ForClock("", "Node", clock).Cells(node)
	if cells[1] != "NotReady,SchedulingDisabled" || cells[2] != "<none>" {
		t.Errorf("status %v roles %v", cells[1], cells[2])
	}
	node.Status.Conditions = nil
	cells, _ = ForClock("", "Node", clock).Cells(node)
	if cells[1] != "Unknown,SchedulingDisabled" {
		t.Errorf("status without conditions %v", cells[1])
	}
}

func TestSmallRows(t *testing.T) {
	expectRow(t, "", "Namespace", &corev1.Namespace{ObjectMeta: meta("team", 26*time.Hour),
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, "team", "Active", "26h")
	expectRow(t, "", "ConfigMap", &corev1.ConfigMap{ObjectMeta: meta("cfg", 0),
		Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}}, "cfg", int64(2), "0s")
	expectRow(t, "", "Secret", &corev1.Secret{ObjectMeta: meta("tls", 5*time.Hour), Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}, "tls", "kubernetes.io/tls", int64(2), "5h")
	expectRow(t, "coordination.k8s.io", "Lease", &coordinationv1.Lease{ObjectMeta: meta("kube-scheduler", 30*time.Second),
		Spec: coordinationv1.LeaseSpec{HolderIdentity: new("sched-1_abc")}}, "kube-scheduler", "sched-1_abc", "30s")
	expectRow(t, "coordination.k8s.io", "Lease", &coordinationv1.Lease{}, "", "", "<unknown>")
}

func TestEventRows(t *testing.T) {
	e := &corev1.Event{
		ObjectMeta:     meta("web.1", time.Hour),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
		Reason:         "BackOff", Type: corev1.EventTypeWarning, Message: " Back-off restarting \n", Count: 5,
		FirstTimestamp: ago(time.Hour), LastTimestamp: ago(3 * time.Minute),
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
	}
	expectRow(t, "", "Event", e, "3m", "Warning", "BackOff", "pod/web", "spec.containers{app}", "kubelet, node-1",
		"Back-off restarting", "60m", int64(5), "web.1")

	// An events.k8s.io-style event: eventTime, series, reporting fields.
	e = &corev1.Event{
		ObjectMeta: meta("node-1.2", time.Minute), InvolvedObject: corev1.ObjectReference{Kind: "Node"},
		Reason: "Starting", Type: corev1.EventTypeNormal, EventTime: metav1.NewMicroTime(now.Add(-2 * time.Minute)),
		Series:              &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-10 * time.Second))},
		ReportingController: "kube-proxy",
	}
	expectRow(t, "", "Event", e, "10s", "Normal", "Starting", "node", "", "kube-proxy", "", "2m", int64(4), "node-1.2")
}

func TestForUnknownAndErrors(t *testing.T) {
	if For("apps", "Nothing") != nil || For("", "Deployment") != nil {
		t.Error("convertor for a kind without one")
	}
	tc := For("", "Pod")
	if _, err := tc.Cells(&corev1.Node{}); err == nil {
		t.Error("pod convertor printed a node")
	}
	cols := tc.Columns()
	cols[0].Name = "changed"
	if tc.Columns()[0].Name != "Name" {
		t.Error("Columns exposes its backing array")
	}
	for _, k := range [][2]string{{"", "Pod"}, {"", "Node"}, {"", "Namespace"}, {"", "Service"}, {"", "ConfigMap"},
		{"", "Secret"}, {"", "Event"}, {"coordination.k8s.io", "Lease"}, {"apps", "Deployment"}, {"apps", "ReplicaSet"}} {
		names := 0
		for _, c := range For(k[0], k[1]).Columns() {
			if c.Format == "name" {
				names++
			}
			if c.Description == "" || (c.Type != "string" && c.Type != "integer") {
				t.Errorf("%s column %q: type %q description %q", k[1], c.Name, c.Type, c.Description)
			}
		}
		if names != 1 {
			t.Errorf("%s: %d name columns", k[1], names)
		}
	}
}
