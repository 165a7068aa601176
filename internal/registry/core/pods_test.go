package core

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func newPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.27",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}},
		}}},
	}
}

func TestPodDefaults(t *testing.T) {
	r := lookup(t, "pods")
	p := newPod()
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch"}, {Name: "cfg", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
	expectValid(t, create(r, p))

	s := p.Spec
	c := s.Containers[0]
	checks := map[string][2]any{
		"restartPolicy":            {s.RestartPolicy, corev1.RestartPolicyAlways},
		"dnsPolicy":                {s.DNSPolicy, corev1.DNSClusterFirst},
		"terminationGracePeriod":   {*s.TerminationGracePeriodSeconds, int64(30)},
		"schedulerName":            {s.SchedulerName, "default-scheduler"},
		"securityContext":          {s.SecurityContext != nil, true},
		"enableServiceLinks":       {*s.EnableServiceLinks, true},
		"imagePullPolicy":          {c.ImagePullPolicy, corev1.PullIfNotPresent},
		"terminationMessagePath":   {c.TerminationMessagePath, "/dev/termination-log"},
		"terminationMessagePolicy": {c.TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		"port protocol":            {c.Ports[0].Protocol, corev1.ProtocolTCP},
		"requests from limits":     {c.Resources.Requests.Cpu().String(), "500m"},
		"probe period":             {c.LivenessProbe.PeriodSeconds, int32(10)},
		"probe timeout":            {c.LivenessProbe.TimeoutSeconds, int32(1)},
		"probe failure":            {c.LivenessProbe.FailureThreshold, int32(3)},
		"probe path":               {c.LivenessProbe.HTTPGet.Path, "/"},
		"probe scheme":             {c.LivenessProbe.HTTPGet.Scheme, corev1.URISchemeHTTP},
		"volume emptyDir":          {s.Volumes[0].EmptyDir != nil, true},
		"secret defaultMode":       {*s.Volumes[1].Secret.DefaultMode, int32(0o644)},
		"status phase":             {p.Status.Phase, corev1.PodPending},
		"status qos":               {p.Status.QOSClass, corev1.PodQOSBurstable},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
}

func TestPodHostNetworkPorts(t *testing.T) {
	p := newPod()
	p.Spec.HostNetwork = true
	lookup(t, "pods").Strategy.Default(p)
	if got := p.Spec.Containers[0].Ports[0].HostPort; got != 80 {
		t.Errorf("hostPort = %d, want 80", got)
	}
}

func TestPodQOS(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	cases := []struct {
		name             string
		requests, limits corev1.ResourceList
		want             corev1.PodQOSClass
	}{
		{"none", nil, nil, corev1.PodQOSBestEffort},
		{"requests only", rl("100m", ""), nil, corev1.PodQOSBurstable},
		{"limits both (requests defaulted)", nil, rl("1", "1Gi"), corev1.PodQOSGuaranteed},
		{"equal both", rl("1", "1Gi"), rl("1", "1Gi"), corev1.PodQOSGuaranteed},
		{"limits cpu only", nil, rl("1", ""), corev1.PodQOSBurstable},
		{"requests below limits", rl("500m", "1Gi"), rl("1", "1Gi"), corev1.PodQOSBurstable},
	}
	for _, c := range cases {
		p := newPod()
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: c.requests, Limits: c.limits}
		expectValid(t, create(lookup(t, "pods"), p))
		if p.Status.QOSClass != c.want {
			t.Errorf("%s: qos %s, want %s", c.name, p.Status.QOSClass, c.want)
		}
	}
}

func TestPodValidation(t *testing.T) {
	cases := map[string]struct {
		mutate func(*corev1.Pod)
		want   []string
	}{
		"bad name":           {func(p *corev1.Pod) { p.Name = "Web_1" }, []string{"metadata.name:FieldValueInvalid"}},
		"bad label":          {func(p *corev1.Pod) { p.Labels["a b"] = "x" }, []string{"metadata.labels:FieldValueInvalid"}},
		"no containers":      {func(p *corev1.Pod) { p.Spec.Containers = nil }, []string{"spec.containers:FieldValueRequired"}},
		"bad container name": {func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App" }, []string{"spec.containers[0].name:FieldValueInvalid"}},
		"no image":           {func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []string{"spec.containers[0].image:FieldValueRequired"}},
		"port out of range":  {func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, []string{"spec.containers[0].ports[0].containerPort:FieldValueInvalid"}},
		"bad protocol":       {func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "HTTP" }, []string{"spec.containers[0].ports[0].protocol:FieldValueNotSupported"}},
		"bad restartPolicy":  {func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, []string{"spec.restartPolicy:FieldValueNotSupported"}},
		"bad pull policy":    {func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Maybe" }, []string{"spec.containers[0].imagePullPolicy:FieldValueNotSupported"}},
		"missing volume": {func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/x"}}
		}, []string{"spec.containers[0].volumeMounts[0].name:FieldValueNotFound"}},
		"negative quantity": {func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": resource.MustParse("-1")}
		}, []string{"spec.containers[0].resources.limits[cpu]:FieldValueInvalid", "spec.containers[0].resources.requests[cpu]:FieldValueInvalid"}},
		"zero deadline": {func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = new(int64(0)) }, []string{"spec.activeDeadlineSeconds:FieldValueInvalid"}},
		"bad toleration": {func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists", Value: "v"}}
		}, []string{"spec.tolerations[0].operator:FieldValueInvalid"}},
		"two volume types": {func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, []string{"spec.volumes[0].hostPath:FieldValueForbidden"}},
		"probe without handler": {func(p *corev1.Pod) { p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{} }, []string{"spec.containers[0].readinessProbe:FieldValueRequired"}},
		"duplicate container name": {func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "app", Image: "busybox"})
		}, []string{"spec.containers[1].name:FieldValueDuplicate"}},
		"requests over limits": {func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"memory": resource.MustParse("2Gi")},
				Limits:   corev1.ResourceList{"memory": resource.MustParse("1Gi")},
			}
		}, []string{"spec.containers[0].resources.requests:FieldValueInvalid"}},
		"namespace missing": {func(p *corev1.Pod) { p.Namespace = "" }, []string{"metadata.namespace:FieldValueRequired"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := newPod()
			c.mutate(p)
			expectErrors(t, create(lookup(t, "pods"), p), c.want...)
		})
	}
}

// storedPod returns a pod as the server would hold it after a create.
func storedPod(t *testing.T) *corev1.Pod {
	p := newPod()
	p.ResourceVersion = "5"
	expectValid(t, create(lookup(t, "pods"), p))
	return p
}

func TestPodUpdate(t *testing.T) {
	r := lookup(t, "pods")
	old := storedPod(t)
	old.Status.Phase = corev1.PodRunning
	old.Spec.ActiveDeadlineSeconds = new(int64(60))
	cases := map[string]struct {
		mutate func(*corev1.Pod)
		want   []string
	}{
		"image":                 {func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }, nil},
		"labels":                {func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other"} }, nil},
		"shorter deadline":      {func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = new(int64(30)) }, nil},
		"longer deadline":       {func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = new(int64(90)) }, []string{"spec.activeDeadlineSeconds:FieldValueInvalid"}},
		"added toleration":      {func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists"}} }, nil},
		"port change":           {func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 81 }, []string{"spec:FieldValueForbidden"}},
		"nodeName change":       {func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }, []string{"spec:FieldValueForbidden"}},
		"unconditional (no rv)": {func(p *corev1.Pod) { p.ResourceVersion = "" }, nil},
		"name change":           {func(p *corev1.Pod) { p.Name = "other" }, []string{"metadata.name:FieldValueInvalid"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := old.DeepCopy()
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed} // ignored on the main resource
			c.mutate(p)
			expectErrors(t, update(r, p, old), c.want...)
			if p.Status.Phase != corev1.PodRunning {
				t.Errorf("status.phase = %s, want old's Running", p.Status.Phase)
			}
		})
	}
}

func TestPodStatusUpdate(t *testing.T) {
	r := lookup(t, "pods")
	old := storedPod(t)
	p := old.DeepCopy()
	p.Spec.Containers[0].Image = "ignored:2"
	p.Labels = map[string]string{"ignored": "true"}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5", PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}}}
	expectValid(t, updateStatus(r, p, old))
	if p.Spec.Containers[0].Image != "nginx:1.27" || p.Labels["app"] != "web" || p.Labels["ignored"] != "" {
		t.Errorf("status update changed spec or labels: %v %v", p.Spec.Containers[0].Image, p.Labels)
	}
	if p.Status.Phase != corev1.PodRunning || p.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("status = %s/%s, want Running with old's QoS", p.Status.Phase, p.Status.QOSClass)
	}

	done := p.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	back := done.DeepCopy()
	back.Status.Phase = corev1.PodRunning
	expectErrors(t, updateStatus(r, back, done), "status.phase:FieldValueForbidden")
	// As kube-apiserver: an unknown phase is accepted.
	odd := old.DeepCopy()
	odd.Status.Phase = "Exploded"
	expectValid(t, updateStatus(r, odd, old))

	bad := old.DeepCopy()
	bad.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.300"}}
	expectErrors(t, updateStatus(r, bad, old), "status.podIPs[0].ip:FieldValueInvalid")
}

func TestPodAttrs(t *testing.T) {
	p := storedPod(t)
	p.Spec.NodeName = "node-1"
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.7"}}
	expectFields(t, lookup(t, "pods"), p, fields.Set{
		"metadata.name": "web", "metadata.namespace": "default",
		"spec.nodeName": "node-1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
		"spec.serviceAccountName": "", "spec.hostNetwork": "false",
		"status.phase": "Pending", "status.podIP": "10.0.0.7", "status.nominatedNodeName": "",
		"spec.host": "node-1", "status.podIPs": "",
	})
}

func TestPodGracePeriod(t *testing.T) {
	g := lookup(t, "pods").Strategy.(podStrategy)
	cases := []struct {
		name      string
		node      string
		phase     corev1.PodPhase
		requested *int64
		want      int64
	}{
		{"spec default", "n1", corev1.PodRunning, nil, 30},
		{"requested", "n1", corev1.PodRunning, new(int64(5)), 5},
		{"unscheduled", "", corev1.PodPending, nil, 0},
		{"terminal", "n1", corev1.PodSucceeded, nil, 0},
		{"negative", "n1", corev1.PodRunning, new(int64(-3)), 1},
	}
	for _, c := range cases {
		p := storedPod(t)
		p.Spec.NodeName, p.Status.Phase = c.node, c.phase
		if got := g.GracePeriod(p, c.requested); got != c.want {
			t.Errorf("%s: grace %d, want %d", c.name, got, c.want)
		}
	}
}

// TestPodQOSBeforeDefaults checks the class does not depend on whether the
// limits were already copied into requests.
func TestPodQOSBeforeDefaults(t *testing.T) {
	p := newPod()
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")}
	if got := podspec.QOS(&p.Spec); got != corev1.PodQOSGuaranteed {
		t.Errorf("qos %s, want Guaranteed", got)
	}
}
