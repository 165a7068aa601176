package persistentvolume_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestConvergence creates and deletes random static volumes and claims
// (three classes: none, a static one, a provisioned one), seeded. A watch
// on claims checks throughout that no volume is ever named by two Bound
// claims; at the end every claim of the provisioned class is Bound, every
// Pending claim has no Available volume that would satisfy it, and every
// Bound volume's claim names it. SETPOINT_SEED replays a seed.
func TestConvergence(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("SETPOINT_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	e := start(t)
	e.class("fast", storagev1.VolumeBindingImmediate, corev1.PersistentVolumeReclaimDelete)
	static := storagev1.VolumeBindingImmediate
	if _, err := e.scs.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
		Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &static}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := e.pvcs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var violations []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		bound := map[string]string{} // claim -> volume, Bound claims
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			delete(bound, c.Name)
			if ev.Type != watch.Deleted && c.Status.Phase == corev1.ClaimBound {
				for other, vol := range bound {
					if vol == c.Spec.VolumeName {
						mu.Lock()
						violations = append(violations, fmt.Sprintf("volume %s bound to %s and %s", vol, other, c.Name))
						mu.Unlock()
					}
				}
				bound[c.Name] = c.Spec.VolumeName
			}
		}
	}()

	classes := []string{"", "slow", "fast"}
	sizes := []string{"1Gi", "2Gi", "5Gi"}
	var claims, volumes []string
	for i := range 45 {
		switch op := rng.IntN(10); {
		case op < 4:
			name := fmt.Sprintf("pv-%d", i)
			class := classes[rng.IntN(2)]
			e.volume(name, class, sizes[rng.IntN(3)], func(pv *corev1.PersistentVolume) {
				if rng.IntN(3) == 0 {
					pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce}
				}
			})
			volumes = append(volumes, name)
		case op < 8:
			name := fmt.Sprintf("c-%d", i)
			e.claim(name, classes[rng.IntN(3)], sizes[rng.IntN(3)])
			claims = append(claims, name)
		case op < 9 && len(claims) > 0:
			k := rng.IntN(len(claims))
			_ = e.pvcs.Delete(ctx, claims[k], metav1.DeleteOptions{})
			claims = append(claims[:k], claims[k+1:]...)
		case len(volumes) > 0:
			k := rng.IntN(len(volumes))
			_ = e.pvs.Delete(ctx, volumes[k], metav1.DeleteOptions{})
			volumes = append(volumes[:k], volumes[k+1:]...)
		}
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
		}
	}
	e.eventually("convergence", func() bool { return e.settled(t, false) })
	for _, name := range claims {
		if c := e.getClaim(name); c != nil && c.Status.Phase == corev1.ClaimPending && *c.Spec.StorageClassName == "slow" {
			e.waitEvent(name, "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")
			break
		}
	}
	e.settled(t, true)
	w.Stop()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, v := range violations {
		t.Error(v)
	}
}

// settled reports whether the cluster is in its final state; with report
// it fails the test on what is not.
func (e *env) settled(t *testing.T, report bool) bool {
	fail := func(format string, args ...any) bool {
		if report {
			t.Errorf(format, args...)
		}
		return false
	}
	claims, err := e.pvcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail("list claims: %v", err)
	}
	pvs, err := e.pvs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fail("list volumes: %v", err)
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	ok := true
	for i := range claims.Items {
		c := &claims.Items[i]
		byName[c.Name] = c
		class := ""
		if c.Spec.StorageClassName != nil {
			class = *c.Spec.StorageClassName
		}
		switch {
		case c.DeletionTimestamp != nil:
			ok = fail("claim %s still deleting", c.Name)
		case class == "fast" && c.Status.Phase != corev1.ClaimBound:
			ok = fail("provisioned claim %s %s", c.Name, c.Status.Phase)
		case c.Status.Phase == corev1.ClaimPending:
			for j := range pvs.Items {
				pv := &pvs.Items[j]
				if pv.Status.Phase == corev1.VolumeAvailable && pv.Spec.ClaimRef == nil && pv.Spec.StorageClassName == class &&
					pv.Spec.Capacity.Storage().Cmp(*c.Spec.Resources.Requests.Storage()) >= 0 && pv.DeletionTimestamp == nil {
					ok = fail("pending claim %s could bind %s", c.Name, pv.Name)
				}
			}
		}
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Status.Phase != corev1.VolumeBound {
			continue
		}
		c := byName[pv.Spec.ClaimRef.Name]
		if c == nil || c.UID != pv.Spec.ClaimRef.UID || c.Spec.VolumeName != pv.Name || c.Status.Phase != corev1.ClaimBound {
			ok = fail("volume %s Bound to %s/%s, which does not name it", pv.Name, pv.Spec.ClaimRef.Name, pv.Spec.ClaimRef.UID)
		}
	}
	return ok
}
