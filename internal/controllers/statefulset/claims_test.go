package statefulset

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/history"
)

func claimTemplate(name string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "data"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// controllerUID returns the UID of obj's controller, "" if none.
func controllerUID(obj metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return string(ref.UID)
	}
	return ""
}

// TestClaimsAndRetentionPolicy: each pod gets PVC <template>-<set>-<i>
// (template labels plus the selector's), created before it and mounted
// under the template's name; WhenDeleted=Delete makes the set the claims'
// controller; WhenScaled=Delete hands a scaled-down pod's claim to that
// pod; Retain leaves claims without owners.
func TestClaimsAndRetentionPolicy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	set := newSet("db", 2, appsv1.ParallelPodManagement)
	set.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claimTemplate("www")}
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	}
	set = h.create(set)
	h.settle("db")
	ctx := context.Background()
	for i, p := range h.podsOf("db") {
		name := fmt.Sprintf("www-db-%d", i)
		c, err := h.pvcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Labels["tier"] != "data" || c.Labels["app"] != "db" || controllerUID(c) != string(set.UID) {
			t.Fatalf("claim %s: labels %v owners %+v", name, c.Labels, c.OwnerReferences)
		}
		if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].Name != "www" || p.Spec.Volumes[0].PersistentVolumeClaim == nil ||
			p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != name {
			t.Fatalf("pod %s volumes %+v", p.Name, p.Spec.Volumes)
		}
	}
	if ev := h.eventMessages("db"); !slices.Contains(ev["SuccessfulCreate"], "Create Claim www-db-0 Pod db-0 in StatefulSet db success") {
		t.Fatalf("no claim event in %v", ev)
	}
	pod1 := h.podsOf("db")[1]
	h.scale("db", 1)
	h.eventually("db-1's claim handed to db-1, db-1 deleted", func() error {
		c, err := h.pvcs.Get(ctx, "www-db-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if controllerUID(c) != string(pod1.UID) || hasOwner(c, set) {
			return fmt.Errorf("owners %+v", c.OwnerReferences)
		}
		if got := names(h.podsOf("db")); got != "db-0" {
			return fmt.Errorf("pods %s", got)
		}
		return nil
	})
	// The claim still belongs to the deleted db-1 (no garbage collector
	// here): scaling up again waits for it rather than reuse a claim bound
	// for deletion.
	h.scale("db", 2)
	h.eventually("status seen", func() error {
		s, _ := h.sets.Get(ctx, "db", metav1.GetOptions{})
		if s.Status.ObservedGeneration != s.Generation {
			return fmt.Errorf("generation %d observed %d", s.Generation, s.Status.ObservedGeneration)
		}
		return nil
	})
	if got := names(h.podsOf("db")); got != "db-0" {
		t.Fatalf("recreated db-1 on a stale claim: %s", got)
	}
	// The claim carries the pvc-protection finalizer the API server adds;
	// no pod uses it, so it is dropped here as the pvc-protection
	// controller (not running in this test) would drop it.
	if _, err := h.pvcs.Patch(ctx, "www-db-1", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.pvcs.Delete(ctx, "www-db-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.settle("db")
	c, err := h.pvcs.Get(ctx, "www-db-1", metav1.GetOptions{})
	if err != nil || controllerUID(c) != string(set.UID) {
		t.Fatalf("new claim: %v, owners %+v", err, c.OwnerReferences)
	}

	// Retain/Retain: the controller removes its owner references.
	h.mutate("db", func(s *appsv1.StatefulSet) { s.Spec.PersistentVolumeClaimRetentionPolicy = nil })
	h.eventually("owners removed", func() error {
		for _, n := range []string{"www-db-0", "www-db-1"} {
			c, err := h.pvcs.Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(c.OwnerReferences) != 0 {
				return fmt.Errorf("%s owners %+v", n, c.OwnerReferences)
			}
		}
		return nil
	})
}

// TestRevisionDataMatchesKubernetes: the revision of the set of
// Kubernetes' StatefulSet compatibility test data has, byte for byte, the
// data kube-controller-manager stored, and so its name test-776999688b.
func TestRevisionDataMatchesKubernetes(t *testing.T) {
	grace := int64(30)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "test", Namespace: "default", UID: "ec335e25-1045-4216-8634-50cfbe05f3d6"},
		Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"test": "value"}, Labels: map[string]string{"app": "foo"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "test", Image: "test", ImagePullPolicy: corev1.PullAlways,
					TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
				DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
				SecurityContext: &corev1.PodSecurityContext{}, TerminationGracePeriodSeconds: &grace,
			},
		}},
	}
	const want = `{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}`
	zero := int32(0)
	rev, err := newRevision(set, 2, &zero)
	if err != nil {
		t.Fatal(err)
	}
	if string(rev.Data.Raw) != want {
		t.Fatalf("data\n%s\nwant\n%s", rev.Data.Raw, want)
	}
	if rev.Name != "test-776999688b" || rev.Labels[history.HashLabel] != "776999688b" {
		t.Fatalf("name %s", rev.Name)
	}
	// Applying the revision to a set with another template restores it.
	other := set.DeepCopy()
	other.Spec.Template.Spec.Containers[0].Image = "other"
	other.Spec.Template.Labels["extra"] = "x"
	restored, err := applyRevision(other, rev)
	if err != nil {
		t.Fatal(err)
	}
	if restored.Spec.Template.Spec.Containers[0].Image != "test" || restored.Spec.Template.Labels["extra"] != "" {
		t.Fatalf("restored template %+v", restored.Spec.Template)
	}
}
