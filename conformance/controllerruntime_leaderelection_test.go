package conformance

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/setpoint-dev/setpoint/testenv"
)

// recordingReconciler remembers which ConfigMaps it reconciled.
type recordingReconciler struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (r *recordingReconciler) Reconcile(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[req.Name] = true
	return ctrl.Result{}, nil
}

func (r *recordingReconciler) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n := range r.seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestControllerRuntimeLeaderElectionHandover: two controller-runtime
// managers with the same Lease: only the leader's controller reconciles;
// stopping it hands over to the other, at once when the leader releases
// the Lease on cancel, after the lease duration when it does not.
func TestControllerRuntimeLeaderElectionHandover(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	const leaseDuration = 4 * time.Second

	for _, release := range []bool{true, false} {
		t.Run(fmt.Sprintf("releaseOnCancel=%v", release), func(t *testing.T) {
			leaseName := fmt.Sprintf("handover-release-%v", release)
			sel := labels.SelectorFromSet(labels.Set{"handover": leaseName})
			newMgr := func() (manager.Manager, *recordingReconciler) {
				opts := crManagerOptions(t)
				opts.LeaderElection = true
				opts.LeaderElectionID = leaseName
				opts.LeaderElectionNamespace = "default"
				opts.LeaderElectionReleaseOnCancel = release
				opts.LeaseDuration = ptr.To(leaseDuration)
				opts.RenewDeadline = ptr.To(3 * time.Second)
				opts.RetryPeriod = ptr.To(500 * time.Millisecond)
				opts.Cache = cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: sel}}}
				mgr, err := ctrl.NewManager(crRestConfig(t, env.Kubeconfig), opts)
				if err != nil {
					t.Fatal(err)
				}
				r := &recordingReconciler{seen: map[string]bool{}}
				if err := ctrl.NewControllerManagedBy(mgr).Named("handover").For(&corev1.ConfigMap{}).Complete(r); err != nil {
					t.Fatal(err)
				}
				return mgr, r
			}
			holderOf := func() (string, int32) {
				l, err := cs.CoordinationV1().Leases("default").Get(ctx, leaseName, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("lease: %v", err)
				}
				return ptr.Deref(l.Spec.HolderIdentity, ""), ptr.Deref(l.Spec.LeaseTransitions, -1)
			}
			createCM := func(name string) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: leaseName + "-" + name, Namespace: "default", Labels: map[string]string{"handover": leaseName}}}
				if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			reconciled := func(r *recordingReconciler, want ...string) func() (bool, string) {
				var full []string
				for _, w := range want {
					full = append(full, leaseName+"-"+w)
				}
				return func() (bool, string) {
					got := r.names()
					return fmt.Sprint(got) == fmt.Sprint(full), fmt.Sprint(got)
				}
			}

			mgrA, recA := newMgr()
			runA := crStart(t, mgrA)
			crWaitClosed(t, mgrA.Elected(), 10*time.Second, "A elected")
			holderA, transitions := holderOf()
			if holderA == "" || transitions != 0 {
				t.Fatalf("lease after A's election: holder %q, transitions %d", holderA, transitions)
			}

			mgrB, recB := newMgr()
			crStart(t, mgrB)
			// B runs (its cache syncs before it leads) and competes.
			syncCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if !mgrB.GetCache().WaitForCacheSync(syncCtx) {
				t.Fatal("B's cache did not sync")
			}

			createCM("one")
			createCM("two")
			crEventually(t, 10*time.Second, "A reconciles", reconciled(recA, "one", "two"))
			// Four retry periods later B still follows and has reconciled nothing.
			time.Sleep(4 * 500 * time.Millisecond)
			if crClosed(mgrB.Elected()) || len(recB.names()) != 0 {
				t.Fatalf("B led (%v) or reconciled %v while A held the lease", crClosed(mgrB.Elected()), recB.names())
			}
			if h, _ := holderOf(); h != holderA {
				t.Fatalf("lease holder %q, want A (%q)", h, holderA)
			}

			stopped := time.Now()
			if err := runA.stop(); err != nil {
				t.Fatalf("A's Start on cancel: %v", err)
			}
			crWaitClosed(t, mgrB.Elected(), 3*leaseDuration, "B elected after A stopped")
			handover := time.Since(stopped)
			t.Logf("handover took %v", handover)
			if release && handover > 2*time.Second {
				t.Fatalf("A released the lease, yet B took %v to lead", handover)
			}
			if !release && handover < leaseDuration/2 {
				t.Fatalf("B led %v after A stopped without release: before the lease (%v) expired", handover, leaseDuration)
			}
			crEventually(t, 5*time.Second, "lease held by B", func() (bool, string) {
				h, tr := holderOf()
				return h != "" && h != holderA && tr == 1, fmt.Sprintf("holder %q transitions %d (A was %q)", h, tr, holderA)
			})

			createCM("three")
			crEventually(t, 10*time.Second, "B reconciles", reconciled(recB, "one", "three", "two"))
			if ok, got := reconciled(recA, "one", "two")(); !ok {
				t.Fatalf("A reconciled %v after it stopped", got)
			}
		})
	}
}
