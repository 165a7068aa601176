package resourcequota_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

var (
	podsGVR     = corev1.SchemeGroupVersion.WithResource("pods")
	quotasGVR   = corev1.SchemeGroupVersion.WithResource("resourcequotas")
	cmsGVR      = corev1.SchemeGroupVersion.WithResource("configmaps")
	servicesGVR = corev1.SchemeGroupVersion.WithResource("services")
	pvcsGVR     = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

type env struct {
	t      *testing.T
	ctx    context.Context
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	quotas *rest.Resource[*corev1.ResourceQuota, *corev1.ResourceQuotaList]
	cms    *rest.Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	svcs   *rest.Resource[*corev1.Service, *corev1.ServiceList]
	pvcs   *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
}

// TestQuotaAdmission runs the cases on one real server, each in its own
// namespace.
func TestQuotaAdmission(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	c := s.RESTClient(t)
	cases := []struct {
		name string
		run  func(*env)
	}{
		{"ExceededQuotaRefusedStoreUnchanged", exceededQuotaRefusedStoreUnchanged},
		{"ComputeResourcesAndConstraints", computeResourcesAndConstraints},
		{"StatusUnknownRefused", statusUnknownRefused},
		{"DryRunAndInvalidObjectsAreNotCharged", dryRunAndInvalidObjectsAreNotCharged},
		{"ConcurrentCreatesNeverExceed", concurrentCreatesNeverExceed},
		{"ServicesAndClaims", servicesAndClaims},
		{"Scopes", scopes},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := fmt.Sprintf("case-%d", i)
			nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
			if _, err := nss.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			tc.run(&env{
				t: t, ctx: context.Background(),
				pods:   rest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true).Namespace(ns),
				quotas: rest.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c, quotasGVR, true).Namespace(ns),
				cms:    rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, cmsGVR, true).Namespace(ns),
				svcs:   rest.For[*corev1.Service, *corev1.ServiceList](c, servicesGVR, true).Namespace(ns),
				pvcs:   rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, pvcsGVR, true).Namespace(ns),
			})
		})
	}
}

// quota creates a quota and sets its status as the controller would:
// hard from spec, used as given (zero for every hard name not given).
func (e *env) quota(name string, hard corev1.ResourceList, used corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) {
	e.t.Helper()
	q, err := e.quotas.Create(e.ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	q.Status.Hard = hard
	q.Status.Used = corev1.ResourceList{}
	for k := range hard {
		q.Status.Used[k] = resource.MustParse("0")
	}
	for k, v := range used {
		q.Status.Used[k] = v
	}
	if _, err := e.quotas.UpdateStatus(e.ctx, q, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) used(name string) corev1.ResourceList {
	e.t.Helper()
	q, err := e.quotas.Get(e.ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return q.Status.Used
}

func (e *env) wantUsed(quota string, name corev1.ResourceName, want string) {
	e.t.Helper()
	got := e.used(quota)[name]
	if got.Cmp(resource.MustParse(want)) != 0 {
		e.t.Fatalf("quota %s used %s = %s, want %s", quota, name, got.String(), want)
	}
}

func pod(name string, requests, limits corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}}}}
}

// wantForbidden checks err is kube-apiserver's 403 with message msg.
func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden, got %v", err)
	}
	if got := err.(apierrors.APIStatus).Status().Message; got != msg {
		t.Fatalf("message\n got %q\nwant %q", got, msg)
	}
}

func (e *env) podCount() int {
	e.t.Helper()
	l, err := e.pods.List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(l.Items)
}

func exceededQuotaRefusedStoreUnchanged(e *env) {
	t := e.t
	e.quota("q", corev1.ResourceList{"pods": resource.MustParse("2")}, nil)
	for _, n := range []string{"p1", "p2"} {
		if _, err := e.pods.Create(e.ctx, pod(n, nil, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.wantUsed("q", "pods", "2")
	_, err := e.pods.Create(e.ctx, pod("p3", nil, nil), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`)
	if n := e.podCount(); n != 2 {
		t.Fatalf("%d pods stored, want 2", n)
	}
	e.wantUsed("q", "pods", "2")
	// generateName: the refusal names the prefix, as kube-apiserver's.
	p := pod("", nil, nil)
	p.GenerateName = "gen-"
	_, err = e.pods.Create(e.ctx, p, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("generateName: want 403, got %v", err)
	}
}

func computeResourcesAndConstraints(e *env) {
	t := e.t
	e.quota("compute", corev1.ResourceList{"limits.cpu": resource.MustParse("2"), "requests.memory": resource.MustParse("1Gi")}, nil)
	_, err := e.pods.Create(e.ctx, pod("none", nil, nil), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "none" is forbidden: failed quota: compute: must specify limits.cpu for: c; requests.memory for: c`)
	small := pod("small", corev1.ResourceList{"memory": resource.MustParse("512Mi")}, corev1.ResourceList{"cpu": resource.MustParse("1500m")})
	if _, err := e.pods.Create(e.ctx, small, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.wantUsed("compute", "limits.cpu", "1500m")
	e.wantUsed("compute", "requests.memory", "512Mi")
	big := pod("big", corev1.ResourceList{"memory": resource.MustParse("100Mi")}, corev1.ResourceList{"cpu": resource.MustParse("1")})
	_, err = e.pods.Create(e.ctx, big, metav1.CreateOptions{})
	wantForbidden(t, err, `pods "big" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=1500m, limited: limits.cpu=2`)
	e.wantUsed("compute", "limits.cpu", "1500m")
	e.wantUsed("compute", "requests.memory", "512Mi")
	if n := e.podCount(); n != 1 {
		t.Fatalf("%d pods stored, want 1", n)
	}
}

func statusUnknownRefused(e *env) {
	t := e.t
	if _, err := e.quotas.Create(e.ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "fresh"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("3")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// status.hard is empty until the controller fills it: the quota does
	// not cover yet, as in kube-apiserver.
	if _, err := e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q, err := e.quotas.Get(e.ctx, "fresh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status.Hard = q.Spec.Hard
	if _, err := e.quotas.UpdateStatus(e.ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	wantForbidden(t, err, `configmaps "b" is forbidden: status unknown for quota: fresh, resources: count/configmaps`)
	if _, err := e.cms.Get(e.ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("refused configmap stored: %v", err)
	}
}

func dryRunAndInvalidObjectsAreNotCharged(e *env) {
	t := e.t
	e.quota("q", corev1.ResourceList{"count/configmaps": resource.MustParse("2"), "configmaps": resource.MustParse("2")}, nil)
	if _, err := e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}, metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	e.wantUsed("q", "count/configmaps", "0")
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"not a key!": "x"}}
	if _, err := e.cms.Create(e.ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("want 422, got %v", err)
	}
	e.wantUsed("q", "count/configmaps", "0")
	e.wantUsed("q", "configmaps", "0")
	for _, n := range []string{"a", "b"} {
		if _, err := e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	wantForbidden(t, err, `configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1,count/configmaps=1, used: configmaps=2,count/configmaps=2, limited: configmaps=2,count/configmaps=2`)
}

// concurrentCreatesNeverExceed: N parallel creates against a quota of
// k leave exactly k objects, and used says k.
func concurrentCreatesNeverExceed(e *env) {
	t := e.t
	const n, k = 40, 7
	e.quota("q", corev1.ResourceList{"count/configmaps": resource.MustParse(fmt.Sprint(k))}, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, refused := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case apierrors.IsForbidden(err):
				refused++
			default:
				t.Errorf("create %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	l, err := e.cms.List(e.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, cm := range l.Items {
		if cm.Name != "kube-root-ca.crt" {
			stored++
		}
	}
	if created != k || refused != n-k || stored != k {
		t.Fatalf("created %d, refused %d, stored %d; want %d, %d, %d", created, refused, stored, k, n-k, k)
	}
	e.wantUsed("q", "count/configmaps", fmt.Sprint(k))
}

func servicesAndClaims(e *env) {
	t := e.t
	e.quota("net", corev1.ResourceList{"services.nodeports": resource.MustParse("2"), "services.loadbalancers": resource.MustParse("0")}, nil)
	np := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
		Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}}}}
	if _, err := e.svcs.Create(e.ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.wantUsed("net", "services.nodeports", "2")
	lb := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
		Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	_, err := e.svcs.Create(e.ctx, lb, metav1.CreateOptions{})
	wantForbidden(t, err, `services "lb" is forbidden: exceeded quota: net, requested: services.loadbalancers=1,services.nodeports=1, used: services.loadbalancers=0,services.nodeports=2, limited: services.loadbalancers=0,services.nodeports=2`)
	if _, err := e.svcs.Get(e.ctx, "lb", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("refused service stored: %v", err)
	}

	e.quota("storage", corev1.ResourceList{"requests.storage": resource.MustParse("10Gi"),
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims": resource.MustParse("1")}, nil)
	gold := "gold"
	claim := func(name string, size string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &gold, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse(size)}}}}
	}
	if _, err := e.pvcs.Create(e.ctx, claim("one", "4Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.wantUsed("storage", "requests.storage", "4Gi")
	_, err = e.pvcs.Create(e.ctx, claim("two", "1Gi"), metav1.CreateOptions{})
	wantForbidden(t, err, `persistentvolumeclaims "two" is forbidden: exceeded quota: storage, requested: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1, used: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1, limited: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1`)
	e.wantUsed("storage", "requests.storage", "4Gi")
}

func scopes(e *env) {
	t := e.t
	e.quota("besteffort", corev1.ResourceList{"pods": resource.MustParse("1")}, nil, corev1.ResourceQuotaScopeBestEffort)
	if _, err := e.pods.Create(e.ctx, pod("be1", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := e.pods.Create(e.ctx, pod("be2", nil, nil), metav1.CreateOptions{})
	wantForbidden(t, err, `pods "be2" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1`)
	// a pod with requests is outside the scope
	burst := pod("burst", corev1.ResourceList{"cpu": resource.MustParse("100m")}, nil)
	if _, err := e.pods.Create(e.ctx, burst, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.wantUsed("besteffort", "pods", "1")
}
