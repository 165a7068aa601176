package conformance

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/setpoint-dev/setpoint/testenv"
)

const (
	exposeLabel      = "expose"                              // Deployments the exposer serves: expose=true
	exposeManagedBy  = "app.kubernetes.io/managed-by"        // on the Services it creates
	exposerName      = "exposer"                             // value of exposeManagedBy
	exposePortAnno   = "exposer.setpoint.dev/port"           // the Service port (default 80)
	exposeAvailAnno  = "exposer.setpoint.dev/available"      // written back: available replicas
	lastAppliedAnno  = corev1.LastAppliedConfigAnnotation    // stripped from cached Deployments
	rsControllerUIDx = "exposer.setpoint.dev/controller-uid" // ReplicaSet field index
)

// exposer is a typical controller-runtime reconciler: for each Deployment
// labelled expose=true it keeps a Service selecting its pods (controlled by
// the Deployment) and writes the Deployment's available replicas, summed
// over the ReplicaSets it controls, into an annotation.
type exposer struct {
	client.Client
	scheme     *runtime.Scheme
	reconciles atomic.Int64
}

func (r *exposer) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.reconciles.Add(1)
	var d appsv1.Deployment
	if err := r.Get(ctx, req.NamespacedName, &d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !d.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	port := int32(80)
	if p, err := strconv.Atoi(d.Annotations[exposePortAnno]); err == nil {
		port = int32(p)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		svc.Labels[exposeManagedBy] = exposerName
		svc.Spec.Selector = d.Spec.Selector.MatchLabels
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}
		return controllerutil.SetControllerReference(&d, svc, r.scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	var rss appsv1.ReplicaSetList
	if err := r.List(ctx, &rss, client.InNamespace(d.Namespace), client.MatchingFields{rsControllerUIDx: string(d.UID)}); err != nil {
		return ctrl.Result{}, err
	}
	var available int32
	for _, rs := range rss.Items {
		available += rs.Status.AvailableReplicas
	}
	if want := strconv.Itoa(int(available)); d.Annotations[exposeAvailAnno] != want {
		patch := client.MergeFrom(d.DeepCopy())
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[exposeAvailAnno] = want
		if err := r.Patch(ctx, &d, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// stripLastApplied is a per-object cache transform: cached Deployments
// lose kubectl's last-applied annotation (and managedFields).
func stripLastApplied(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a != nil {
			delete(a, lastAppliedAnno)
			o.SetAnnotations(a)
		}
	}
	return obj, nil
}

func exposedDeployment(name string, replicas int32, expose bool) *appsv1.Deployment {
	lbl := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{},
			Annotations: map[string]string{lastAppliedAnno: `{"kind":"Deployment"}`}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if expose {
		d.Labels[exposeLabel] = "true"
	}
	return d
}

// TestControllerRuntimeManagerConverges: a controller-runtime Manager
// built from setpoint's kubeconfig, with Lease leader election, a cache
// with a default transform (managedFields stripped), a per-object
// transform and per-object label selection, runs a reconciler built with
// For(Deployment), Owns(Service), Owns(ReplicaSet) against a whole setpoint
// cluster (what `setpoint up` runs: API server, controller manager,
// scheduler, 3 simulated nodes) and converges.
func TestControllerRuntimeManagerConverges(t *testing.T) {
	env := startSetpoint(t, testenv.Options{Controllers: true, Nodes: 3})
	cs := clientset(t, env)
	ctx := context.Background()

	const leaseNS, leaseName = "kube-system", "exposer.conformance.setpoint.dev"
	opts := crManagerOptions(t)
	opts.LeaderElection = true
	opts.LeaderElectionID = leaseName
	opts.LeaderElectionNamespace = leaseNS
	opts.Cache = cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&appsv1.Deployment{}: {Label: labels.SelectorFromSet(labels.Set{exposeLabel: "true"}), Transform: stripLastApplied},
			&corev1.Service{}:    {Label: labels.SelectorFromSet(labels.Set{exposeManagedBy: exposerName})},
		},
	}
	mgr, err := ctrl.NewManager(crRestConfig(t, env.Kubeconfig), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1.ReplicaSet{}, rsControllerUIDx, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "Deployment" {
			return []string{string(ref.UID)}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := &exposer{Client: mgr.GetClient(), scheme: mgr.GetScheme()}
	if err := ctrl.NewControllerManagedBy(mgr).Named("exposer").
		For(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&appsv1.ReplicaSet{}).
		Complete(r); err != nil {
		t.Fatal(err)
	}
	crStart(t, mgr)
	crWaitClosed(t, mgr.Elected(), 30*time.Second, "manager elected")

	// Leader election used a Lease in setpoint, held by this process.
	lease, err := cs.CoordinationV1().Leases(leaseNS).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the manager's Lease: %v", err)
	}
	host, _ := os.Hostname()
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if !strings.HasPrefix(holder, host+"_") || ptr.Deref(lease.Spec.LeaseDurationSeconds, 0) != 15 ||
		lease.Spec.AcquireTime == nil || lease.Spec.RenewTime == nil {
		t.Fatalf("lease: holder %q (want %s_<uuid>), duration %v, acquire %v, renew %v", holder, host,
			ptr.Deref(lease.Spec.LeaseDurationSeconds, 0), lease.Spec.AcquireTime, lease.Spec.RenewTime)
	}
	firstRenew := lease.Spec.RenewTime.Time

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 3 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	nodeNames := map[string]bool{}
	for _, n := range nodes.Items {
		nodeNames[n.Name] = true
	}

	web, err := cs.AppsV1().Deployments("default").Create(ctx, exposedDeployment("web", 2, true), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, exposedDeployment("hidden", 1, false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The Service exists, controlled by the Deployment, and selects its pods.
	svcFor := func(port int32) func() (bool, string) {
		return func() (bool, string) {
			svc, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ref := metav1.GetControllerOf(svc)
			if ref == nil || ref.UID != web.UID || ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != "web" ||
				!ptr.Deref(ref.BlockOwnerDeletion, false) {
				return false, fmt.Sprintf("controller reference %+v", svc.OwnerReferences)
			}
			if svc.Spec.Selector["app"] != "web" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != port ||
				svc.Spec.ClusterIP == "" || svc.Labels[exposeManagedBy] != exposerName {
				return false, fmt.Sprintf("spec %+v labels %v", svc.Spec, svc.Labels)
			}
			return true, ""
		}
	}
	crEventually(t, 30*time.Second, "Service web", svcFor(80))
	available := func(n int) func() (bool, string) {
		return func() (bool, string) {
			d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return d.Annotations[exposeAvailAnno] == strconv.Itoa(n) && d.Status.AvailableReplicas == int32(n),
				fmt.Sprintf("annotation %q, status.availableReplicas %d", d.Annotations[exposeAvailAnno], d.Status.AvailableReplicas)
		}
	}
	crEventually(t, 60*time.Second, "web's available replicas written back", available(2))

	// The Deployment's pods run on the simulated nodes.
	runningOnNodes := func(n int) func() (bool, string) {
		return func() (bool, string) {
			pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return false, err.Error()
			}
			var desc []string
			running := 0
			for _, p := range pods.Items {
				desc = append(desc, p.Name+"@"+p.Spec.NodeName+":"+string(p.Status.Phase))
				if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && nodeNames[p.Spec.NodeName] && p.Status.PodIP != "" {
					running++
				}
			}
			sort.Strings(desc)
			return running == n && len(pods.Items) == n, strings.Join(desc, " ")
		}
	}
	crEventually(t, 30*time.Second, "web's pods running on the nodes", runningOnNodes(2))

	// The Deployment not selected by the cache's label selector is not served.
	if _, err := cs.CoreV1().Services("default").Get(ctx, "hidden", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Service for the unlabelled Deployment: %v", err)
	}
	var dl appsv1.DeploymentList
	if err := mgr.GetClient().List(ctx, &dl); err != nil || len(dl.Items) != 1 || dl.Items[0].Name != "web" {
		t.Fatalf("cached Deployments (label expose=true): %v %v", dl.Items, err)
	}

	// Transforms: the cache holds web without the last-applied annotation
	// (per-object transform); the API server still has it.
	var cached, live appsv1.Deployment
	if err := mgr.GetClient().Get(ctx, types.NamespacedName{Namespace: "default", Name: "web"}, &cached); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetAPIReader().Get(ctx, types.NamespacedName{Namespace: "default", Name: "web"}, &live); err != nil {
		t.Fatal(err)
	}
	if _, ok := cached.Annotations[lastAppliedAnno]; ok || cached.ManagedFields != nil {
		t.Fatalf("cached Deployment not transformed: %v %v", cached.Annotations, cached.ManagedFields)
	}
	if live.Annotations[lastAppliedAnno] == "" {
		t.Fatalf("live Deployment lost its annotation: %v", live.Annotations)
	}
	var cachedRSs appsv1.ReplicaSetList
	if err := mgr.GetClient().List(ctx, &cachedRSs, client.MatchingFields{rsControllerUIDx: string(web.UID)}); err != nil || len(cachedRSs.Items) != 1 {
		t.Fatalf("ReplicaSets by controller UID through the cache index: %v %v", cachedRSs.Items, err)
	}
	// The default transform strips managedFields, which setpoint records
	// on every write: the live objects have them, the cached ones not.
	var liveRS appsv1.ReplicaSet
	var cachedSvc, liveSvc corev1.Service
	rsKey := client.ObjectKeyFromObject(&cachedRSs.Items[0])
	svcKey := types.NamespacedName{Namespace: "default", Name: "web"}
	if err := mgr.GetAPIReader().Get(ctx, rsKey, &liveRS); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetClient().Get(ctx, svcKey, &cachedSvc); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetAPIReader().Get(ctx, svcKey, &liveSvc); err != nil {
		t.Fatal(err)
	}
	if len(liveRS.ManagedFields) == 0 || len(liveSvc.ManagedFields) == 0 || len(live.ManagedFields) == 0 {
		t.Fatalf("setpoint recorded no managedFields: ReplicaSet %v, Service %v, Deployment %v", liveRS.ManagedFields, liveSvc.ManagedFields, live.ManagedFields)
	}
	if cachedRSs.Items[0].ManagedFields != nil || cachedSvc.ManagedFields != nil {
		t.Fatalf("default transform did not strip managedFields: ReplicaSet %v, Service %v", cachedRSs.Items[0].ManagedFields, cachedSvc.ManagedFields)
	}

	// A deleted Service is recreated.
	old, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	crEventually(t, 30*time.Second, "Service web recreated", func() (bool, string) {
		svc, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return svc.UID != old.UID && metav1.IsControlledBy(svc, web), fmt.Sprintf("uid %s (old %s)", svc.UID, old.UID)
	})

	// A changed Deployment is reconciled: 3 replicas and port 8080.
	patch := []byte(`{"metadata":{"annotations":{"` + exposePortAnno + `":"8080"}},"spec":{"replicas":3}}`)
	if _, err := cs.AppsV1().Deployments("default").Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	crEventually(t, 30*time.Second, "Service web on port 8080", svcFor(8080))
	crEventually(t, 60*time.Second, "web's 3 available replicas written back", available(3))
	crEventually(t, 30*time.Second, "web's 3 pods running on the nodes", runningOnNodes(3))

	// Converged means quiet: once the rollout is complete, no further
	// writes to the Service and no reconciles while nothing changes.
	crEventually(t, 30*time.Second, "rollout complete", func() (bool, string) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		progressing := ""
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing {
				progressing = c.Reason
			}
		}
		st := d.Status
		return st.ObservedGeneration == d.Generation && st.Replicas == 3 && st.UpdatedReplicas == 3 && st.ReadyReplicas == 3 &&
			st.AvailableReplicas == 3 && progressing == "NewReplicaSetAvailable", fmt.Sprintf("%+v", st)
	})
	time.Sleep(200 * time.Millisecond) // the last status events reach the manager
	quiet, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := r.reconciles.Load()
	time.Sleep(time.Second)
	after, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != quiet.ResourceVersion || r.reconciles.Load() != before {
		t.Fatalf("not quiet after convergence: Service resourceVersion %s -> %s, reconciles %d -> %d (%v)",
			quiet.ResourceVersion, after.ResourceVersion, before, r.reconciles.Load(), err)
	}

	// The Lease is renewed (every RetryPeriod, 2 s) by the same holder.
	crEventually(t, 10*time.Second, "lease renewed", func() (bool, string) {
		l, err := cs.CoordinationV1().Leases(leaseNS).Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ptr.Deref(l.Spec.HolderIdentity, "") == holder && l.Spec.RenewTime.After(firstRenew),
			fmt.Sprintf("holder %q renew %v (want %s after %v)", ptr.Deref(l.Spec.HolderIdentity, ""), l.Spec.RenewTime, holder, firstRenew)
	})

	// Deleting the Deployment removes the Service through setpoint's
	// garbage collector (the exposer never deletes Services).
	if err := cs.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	crEventually(t, 30*time.Second, "Service web collected", func() (bool, string) {
		_, err := cs.CoreV1().Services("default").Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	crEventually(t, 30*time.Second, "web's ReplicaSets and pods collected", func() (bool, string) {
		rss, err1 := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		pods, err2 := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err1 != nil || err2 != nil {
			return false, fmt.Sprint(err1, err2)
		}
		return len(rss.Items) == 0 && len(pods.Items) == 0, fmt.Sprintf("%d ReplicaSets, %d pods", len(rss.Items), len(pods.Items))
	})
	t.Logf("exposer reconciled %d times", r.reconciles.Load())
}
