package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/rest"
)

const volumeManifest = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: db
spec:
  containers:
  - name: db
    image: postgres:16
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
`

// TestUpVolumes is a claim's whole life with real kubectl against `setpoint
// up`: the default class standard is there; a claim without a class and a
// pod using it end Bound and Running; the provisioned volume carries a node
// affinity to the pod's node; growing the request expands the volume and
// the claim; deleting the pod and the claim deletes the volume. A watch on
// claims checks throughout that no volume is bound to two claims.
func TestUpVolumes(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 2)
	c := restClient(t, cl.kubeconfig)
	pvcs := rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace("default")
	pvs := rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumes"), false)
	ctx := context.Background()

	eventually(t, 30*time.Second, "default class", func() string {
		out, _, _ := cl.kubectlErr(t, "", "get", "storageclass", "--no-headers")
		f := strings.Fields(out)
		if len(f) < 6 || f[0] != "standard" || f[1] != "(default)" || f[2] != "setpoint.dev/simulated" || f[3] != "Delete" ||
			f[4] != "WaitForFirstConsumer" || f[5] != "true" {
			return fmt.Sprintf("kubectl get storageclass: %q", out)
		}
		return ""
	})
	violations := watchClaims(t, pvcs)

	cl.kubectl(t, volumeManifest, "apply", "-f", "-")
	var node string
	eventually(t, 30*time.Second, "pod scheduled", func() string {
		node = strings.TrimSpace(cl.kubectl(t, "", "get", "pod", "db", "-o", "jsonpath={.spec.nodeName}"))
		sel := strings.TrimSpace(cl.kubectl(t, "", "get", "pvc", "data", "-o", `jsonpath={.metadata.annotations.volume\.kubernetes\.io/selected-node}`))
		if sel != "" {
			node = sel
			return ""
		}
		if node == "" {
			return "pod not scheduled, no node selected for the claim"
		}
		// A scheduler without volume binding bound the pod without
		// selecting a node for the claim: select the pod's node, as
		// kube-scheduler's VolumeBinding plugin would have.
		t.Logf("the scheduler selected no node for the claim; annotating it with the pod's node %s", node)
		cl.kubectl(t, "", "annotate", "pvc", "data", "volume.kubernetes.io/selected-node="+node)
		return ""
	})
	eventually(t, 30*time.Second, "claim bound", func() string {
		if p := strings.TrimSpace(cl.kubectl(t, "", "get", "pvc", "data", "-o", "jsonpath={.status.phase}")); p != "Bound" {
			return "phase " + p
		}
		return ""
	})
	claim, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *claim.Spec.StorageClassName != "standard" || claim.Spec.VolumeName != "pvc-"+string(claim.UID) {
		t.Errorf("claim class %q volume %q", *claim.Spec.StorageClassName, claim.Spec.VolumeName)
	}
	pvName := claim.Spec.VolumeName
	host := strings.TrimSpace(cl.kubectl(t, "", "get", "node", node, "-o", `jsonpath={.metadata.labels.kubernetes\.io/hostname}`))
	aff := strings.TrimSpace(cl.kubectl(t, "", "get", "pv", pvName, "-o", "jsonpath={.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]}"))
	if host == "" || !strings.Contains(aff, `"key":"kubernetes.io/hostname"`) || !strings.Contains(aff, `"values":["`+host+`"]`) {
		t.Errorf("volume node affinity %s, node %s hostname %q", aff, node, host)
	}
	waitRunning(t, c, "default", "", 1, 60*time.Second)

	cl.kubectl(t, "", "patch", "pvc", "data", "--type", "merge", "-p", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
	eventually(t, 30*time.Second, "expansion", func() string {
		capa := strings.TrimSpace(cl.kubectl(t, "", "get", "pvc", "data", "-o", "jsonpath={.status.capacity.storage}"))
		pvCap := strings.TrimSpace(cl.kubectl(t, "", "get", "pv", pvName, "-o", "jsonpath={.spec.capacity.storage}"))
		if capa != "2Gi" || pvCap != "2Gi" {
			return fmt.Sprintf("claim %s, volume %s", capa, pvCap)
		}
		return ""
	})

	cl.kubectl(t, "", "delete", "pod", "db", "--wait=false")
	cl.kubectl(t, "", "delete", "pvc", "data", "--wait=false")
	eventually(t, 60*time.Second, "claim and volume deleted", func() string {
		if _, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); err == nil {
			return "claim still there"
		}
		if _, err := pvs.Get(ctx, pvName, metav1.GetOptions{}); err == nil {
			return "volume still there"
		}
		return ""
	})
	for _, v := range violations() {
		t.Error(v)
	}
}

// watchClaims watches the claims of default until the test ends and
// returns a function reporting every moment two Bound claims named one
// volume.
func watchClaims(t *testing.T, pvcs *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := pvcs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		bound := map[string]string{}
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			delete(bound, c.Name)
			if ev.Type == watch.Deleted || c.Status.Phase != corev1.ClaimBound {
				continue
			}
			for other, vol := range bound {
				if vol == c.Spec.VolumeName {
					mu.Lock()
					out = append(out, fmt.Sprintf("volume %s bound to claims %s and %s", vol, other, c.Name))
					mu.Unlock()
				}
			}
			bound[c.Name] = c.Spec.VolumeName
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), out...)
	}
}
