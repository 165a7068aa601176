package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGraphVolumes: a node reads the volume bound to its pod's claim and
// the secrets that volume names, until the volume is released.
func TestGraphVolumes(t *testing.T) {
	g := NewGraph()
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1",
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}}}})
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "p-v"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
			NodePublishSecretRef: &corev1.SecretReference{Namespace: "vault", Name: "csi-creds"}}}}}
	g.SetPV(pv)
	if !g.PVRelated("n1", "pv1") || g.PVRelated("n2", "pv1") {
		t.Fatal("the volume of the pod's ephemeral claim is not n1's alone")
	}
	if !g.related("n1", kindSecret, "vault", "csi-creds") || g.related("n2", kindSecret, "vault", "csi-creds") {
		t.Fatal("the volume's secret is not n1's alone")
	}
	pv.Spec.ClaimRef = nil
	g.SetPV(pv)
	if g.PVRelated("n1", "pv1") || g.related("n1", kindSecret, "vault", "csi-creds") {
		t.Fatal("a released volume stays readable")
	}
	g.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mirror",
		Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}},
		Spec: corev1.PodSpec{NodeName: "n1", Volumes: []corev1.Volume{{Name: "s",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "top"}}}}}})
	if g.related("n1", kindSecret, "ns", "top") || !g.PodOnNode("n1", "ns", "mirror") {
		t.Fatal("a mirror pod grants its secrets, or is not on its node")
	}
}
