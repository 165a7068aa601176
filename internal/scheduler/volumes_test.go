package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/rest"
)

type volumeAPI struct {
	e       *env
	pvcs    *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pvs     *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	classes *rest.Resource[*storagev1.StorageClass, *storagev1.StorageClassList]
}

func newVolumeAPI(e *env) *volumeAPI {
	c, err := rest.New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return &volumeAPI{e: e,
		pvcs: rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c,
			corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace("default"),
		pvs: rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c,
			corev1.SchemeGroupVersion.WithResource("persistentvolumes"), false),
		classes: rest.For[*storagev1.StorageClass, *storagev1.StorageClassList](c,
			storagev1.SchemeGroupVersion.WithResource("storageclasses"), false),
	}
}

func (v *volumeAPI) class(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) {
	v.e.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: corev1.LabelTopologyZone, Values: zones}}}}
	}
	if _, err := v.classes.Create(v.e.ctx, sc, metav1.CreateOptions{}); err != nil {
		v.e.t.Fatalf("class %s: %v", name, err)
	}
}

func (v *volumeAPI) claim(name, class string) *corev1.PersistentVolumeClaim {
	v.e.t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	c, err := v.pvcs.Create(v.e.ctx, c, metav1.CreateOptions{})
	if err != nil {
		v.e.t.Fatalf("claim %s: %v", name, err)
	}
	return c
}

// volume creates an Available volume of the class reachable from node.
func (v *volumeAPI) volume(name, class, node string) {
	v.e.t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class,
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname,
					Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}}
	pv, err := v.pvs.Create(v.e.ctx, pv, metav1.CreateOptions{})
	if err != nil {
		v.e.t.Fatalf("volume %s: %v", name, err)
	}
	pv.Status.Phase = corev1.VolumeAvailable
	if _, err := v.pvs.UpdateStatus(v.e.ctx, pv, metav1.UpdateOptions{}); err != nil {
		v.e.t.Fatalf("volume %s status: %v", name, err)
	}
}

// bind does what the PV controller does: the claim names the volume and
// is marked bound.
func (v *volumeAPI) bind(claim, volume string) {
	v.e.t.Helper()
	c, err := v.pvcs.Get(v.e.ctx, claim, metav1.GetOptions{})
	if err != nil {
		v.e.t.Fatal(err)
	}
	c.Spec.VolumeName = volume
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, annBindCompleted, "yes")
	if _, err := v.pvcs.Update(v.e.ctx, c, metav1.UpdateOptions{}); err != nil {
		v.e.t.Fatalf("bind claim %s: %v", claim, err)
	}
}

func withClaim(claim string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: claim,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}

// Volume binding: missing and unbound Immediate claims refuse the pod
// before any node; a bound volume's node affinity decides the node; a
// WaitForFirstConsumer claim gets a node where a matching volume is
// (pre-bound to it) or where its class provisions (the selected-node
// annotation), and the pod is bound once the claim is.
func TestVolumeBinding(t *testing.T) {
	e := newEnv(t, Options{InitialBackoff: 100 * 1e6, MaxBackoff: 200 * 1e6})
	v := newVolumeAPI(e)
	e.addNode(zoneNode("n1", "a"))
	e.addNode(zoneNode("n2", "b"))
	v.class("imm", "example.com/disk", storagev1.VolumeBindingImmediate)
	v.class("wffc", "example.com/disk", storagev1.VolumeBindingWaitForFirstConsumer, "b")
	v.class("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer)

	e.createPod("missing", withClaim("nope"))
	e.waitUnschedulable("missing", `0/2 nodes are available: persistentvolumeclaim "nope" not found.`+notHelpful(2, 2))
	v.claim("imm-claim", "imm")
	e.createPod("immediate", withClaim("imm-claim"))
	e.waitUnschedulable("immediate", "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."+notHelpful(2, 2))

	v.volume("pv-n1", "imm", "n1")
	v.claim("bound", "imm")
	v.bind("bound", "pv-n1")
	e.createPod("uses-bound", withClaim("bound"))
	if n := e.waitBound("uses-bound"); n != "n1" {
		t.Fatalf("uses-bound on %s, want n1 (the volume's node)", n)
	}
	e.createPod("wrong-node", withClaim("bound"), onNode("n2"))
	e.waitUnschedulable("wrong-node", "0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, "+
		"1 node(s) didn't match Pod's node affinity/selector."+notHelpful(2, 2))

	v.claim("dyn", "wffc")
	e.createPod("provisioned", withClaim("dyn"))
	e.eventually("dyn annotated with the selected node", func() string {
		c, err := v.pvcs.Get(e.ctx, "dyn", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if got := c.Annotations[annSelectedNode]; got != "n2" {
			return "selected-node " + got
		}
		return ""
	})
	if p := e.getPod("provisioned"); p.Spec.NodeName != "" {
		t.Fatalf("pod bound to %s before its claim", p.Spec.NodeName)
	}
	v.volume("pvc-dyn", "wffc", "n2")
	v.bind("dyn", "pvc-dyn")
	if n := e.waitBound("provisioned"); n != "n2" {
		t.Fatalf("provisioned on %s, want n2", n)
	}

	v.volume("local-n1", "local", "n1")
	v.claim("loc", "local")
	e.createPod("static", withClaim("loc"))
	e.eventually("local-n1 pre-bound to loc", func() string {
		pv, err := v.pvs.Get(e.ctx, "local-n1", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if r := pv.Spec.ClaimRef; r == nil || r.Name != "loc" || r.Namespace != "default" {
			return "claimRef not set"
		}
		return ""
	})
	v.bind("loc", "local-n1")
	if n := e.waitBound("static"); n != "n1" {
		t.Fatalf("static on %s, want n1", n)
	}
	v.claim("loc2", "local")
	e.createPod("no-volume", withClaim("loc2"))
	e.waitUnschedulable("no-volume", "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."+notHelpful(2, 2))
}
