package fieldmanager_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkPodTracking measures the managed-fields tracking of a pod's two
// writes in a rollout: its create by the ReplicaSet controller, and the
// status update that makes it Running (the simulated kubelet's).
func BenchmarkPodTracking(b *testing.B) {
	r := resource(b, "pods")
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p := rolloutPod()
			r.Update(nil, p, "kube-controller-manager", "")
		}
	})
	live := rolloutPod()
	r.Update(nil, live, "kube-controller-manager", "")
	live.Spec.NodeName = "node-7"
	live.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}}
	b.Run("status", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p := live.DeepCopy()
			runningStatus(p)
			r.Update(live, p, "kubelet", "status")
		}
	})
}

// rolloutPod is a pod of the rollout's ReplicaSet as stored: defaulted,
// with its ServiceAccount's token volume.
func rolloutPod() *corev1.Pod {
	grace, mode := int64(30), int32(420)
	expiry := int64(3607)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "big-5d4f7b9c8-", Name: "big-5d4f7b9c8-x2k9p", Namespace: "default",
			Labels: map[string]string{"app": "big", "pod-template-hash": "5d4f7b9c8"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "big-5d4f7b9c8",
				UID: types.UID("0b7c6f4e-8a43-4f0b-9c55-3f4c1f1d2e6a"), Controller: new(true), BlockOwnerDeletion: new(true)}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: apiresource.MustParse("1m"), corev1.ResourceMemory: apiresource.MustParse("1Mi")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-abcde", ReadOnly: true,
					MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: &mode,
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", DeprecatedServiceAccount: "default", SecurityContext: &corev1.PodSecurityContext{},
			SchedulerName: "default-scheduler", EnableServiceLinks: new(true), Priority: new(int32(0)),
			PreemptionPolicy: new(corev1.PreemptLowerPriority),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable},
	}
}

// runningStatus is the status a node writes when the pod runs.
func runningStatus(p *corev1.Pod) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized),
		cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)}
	p.Status.HostIP, p.Status.PodIP = "10.0.0.7", "10.244.7.12"
	p.Status.HostIPs = []corev1.HostIP{{IP: "10.0.0.7"}}
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.7.12"}}
	p.Status.StartTime = &now
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true, Started: new(true), RestartCount: 0,
		Image: "registry.k8s.io/pause:3.10", ImageID: "registry.k8s.io/pause@sha256:0000", ContainerID: "containerd://abc",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
}
