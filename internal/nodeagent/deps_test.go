package nodeagent_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
)

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

// A container whose env needs a missing ConfigMap or Secret waits in
// CreateContainerConfigError with the kubelet's message and a Failed
// event, and runs once the object appears; optional references never
// block. Checked with the nodes reading as the manager and each as itself.
func TestMissingEnvDependencies(t *testing.T) { forIdentities(t, testMissingEnvDependencies) }

func testMissingEnvDependencies(t *testing.T, start startFunc) {
	e := start(t, nodeagent.Options{})
	envcm := newPod("envcm", corev1.RestartPolicyAlways, "app=nginx")
	envcm.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}
	e.createBound(envcm, "node-0")
	envsec := newPod("envsec", corev1.RestartPolicyAlways, "app=nginx")
	envsec.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}}}
	e.createBound(envsec, "node-0")
	optional := newPod("optional", corev1.RestartPolicyAlways, "app=nginx")
	yes := true
	optional.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: &yes}}}
	e.createBound(optional, "node-0")

	e.waitPod("optional", "running", running)
	for name, msg := range map[string]string{"envcm": `configmap "cfg" not found`, "envsec": `secret "sec" not found`} {
		p := e.waitPod(name, "config error", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "CreateContainerConfigError" })
		if s := containerStatus(p, "app"); s.State.Waiting.Message != msg || p.Status.Phase != corev1.PodPending || p.Status.PodIP == "" {
			t.Errorf("%s: phase %s podIP %q waiting %+v", name, p.Status.Phase, p.Status.PodIP, s.State.Waiting)
		}
		ev := e.waitEvent(name, "Failed", "Error: "+msg)
		if ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.FieldPath != "spec.containers{app}" {
			t.Errorf("%s: event %+v", name, ev)
		}
	}
	create[*corev1.ConfigMap, *corev1.ConfigMapList](e, "configmaps", &corev1.ConfigMap{ObjectMeta: meta("cfg")})
	e.waitPod("envcm", "running", running)
	create[*corev1.Secret, *corev1.SecretList](e, "secrets", &corev1.Secret{ObjectMeta: meta("sec")})
	p := e.waitPod("envsec", "key error", func(p *corev1.Pod) bool {
		s := containerStatus(p, "app")
		return s.State.Waiting != nil && s.State.Waiting.Message == "couldn't find key password in Secret default/sec"
	})
	if waitingReason(p, "app") != "CreateContainerConfigError" {
		t.Errorf("envsec: %+v", containerStatus(p, "app"))
	}
	secrets := forKind[*corev1.Secret, *corev1.SecretList](e, "secrets")
	if _, err := secrets.Update(ctx(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: "default",
		ResourceVersion: getRV(t, e, "sec")}, Data: map[string][]byte{"password": []byte("x")}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPod("envsec", "running", running)
}

func getRV(t *testing.T, e *env, secret string) string {
	s, err := forKind[*corev1.Secret, *corev1.SecretList](e, "secrets").Get(ctx(), secret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.ResourceVersion
}

// A pod whose volume needs a missing ConfigMap, PVC (or one not bound) or
// ServiceAccount (token) stays ContainerCreating, without an address,
// with FailedMount events worded as the kubelet's, until it appears.
// Checked with the nodes reading as the manager and each as itself.
func TestMissingVolumeDependencies(t *testing.T) { forIdentities(t, testMissingVolumeDependencies) }

func testMissingVolumeDependencies(t *testing.T, start startFunc) {
	e := start(t, nodeagent.Options{})
	volcm := newPod("volcm", corev1.RestartPolicyAlways, "app=nginx")
	volcm.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "vcfg"}}}}}
	e.createBound(volcm, "node-0")
	pvc := newPod("pvc", corev1.RestartPolicyAlways, "app=nginx")
	pvc.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}}
	e.createBound(pvc, "node-0")
	sa := newPod("sa", corev1.RestartPolicyAlways, "app=nginx")
	sa.Spec.ServiceAccountName = "robot"
	sa.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
	e.createBound(sa, "node-0")

	for name, msg := range map[string]string{
		"volcm": `MountVolume.SetUp failed for volume "config" : configmap "vcfg" not found`,
		"pvc": `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: ` +
			`error processing PVC default/claim: failed to fetch PVC from API server: persistentvolumeclaims "claim" not found`,
		"sa": `MountVolume.SetUp failed for volume "kube-api-access-abcde" : failed to fetch token: serviceaccounts "robot" not found`,
	} {
		p := e.waitPod(name, "container creating", func(p *corev1.Pod) bool { return waitingReason(p, "app") == "ContainerCreating" })
		if p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" || p.Status.StartTime == nil {
			t.Errorf("%s: phase %s podIP %q startTime %v", name, p.Status.Phase, p.Status.PodIP, p.Status.StartTime)
		}
		if c := podCondition(p, corev1.PodReadyToStartContainers); c == nil || c.Status != corev1.ConditionFalse {
			t.Errorf("%s: PodReadyToStartContainers %+v", name, c)
		}
		if ev := e.waitEvent(name, "FailedMount", msg); ev.Type != corev1.EventTypeWarning || ev.Source.Component != "kubelet" {
			t.Errorf("%s: event %+v", name, ev)
		}
	}
	create[*corev1.ConfigMap, *corev1.ConfigMapList](e, "configmaps", &corev1.ConfigMap{ObjectMeta: meta("vcfg")})
	e.waitPod("volcm", "running", running)
	create[*corev1.ServiceAccount, *corev1.ServiceAccountList](e, "serviceaccounts", &corev1.ServiceAccount{ObjectMeta: meta("robot")})
	e.waitPod("sa", "running", running)

	claim := create[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](e, "persistentvolumeclaims",
		&corev1.PersistentVolumeClaim{ObjectMeta: meta("claim"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: mustQty("1Gi")}}}})
	e.waitEvent("pvc", "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], `+
		`failed to process volumes=[data]: error processing PVC default/claim: PVC is not bound`)
	if p := e.getPod("pvc"); p.Status.Phase != corev1.PodPending {
		t.Errorf("pvc with an unbound claim: %s", p.Status.Phase)
	}
	claim.Status.Phase = corev1.ClaimBound
	if _, err := forKind[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](e, "persistentvolumeclaims").
		UpdateStatus(ctx(), claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitPod("pvc", "running", running)
}

// IgnoreMissingDependencies runs pods whatever they miss, as KWOK does.
func TestIgnoreMissingDependencies(t *testing.T) {
	e := startEnv(t, nodeagent.Options{IgnoreMissingDependencies: true})
	p := newPod("careless", corev1.RestartPolicyAlways, "app=nginx")
	p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "none"}}}}}
	p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "none"}}}}
	e.createBound(p, "node-0")
	e.waitPod("careless", "running", running)
}
