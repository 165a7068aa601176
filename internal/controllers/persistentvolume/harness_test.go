package persistentvolume_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllers/expand"
	"github.com/setpoint-dev/setpoint/internal/controllers/persistentvolume"
	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"
	"github.com/setpoint-dev/setpoint/internal/controllers/pvcprotection"
	"github.com/setpoint-dev/setpoint/internal/controllers/pvprotection"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

// env is a real API server with the volume controllers (binder,
// provisioner with the default class, both protections, expander) on one
// manager; the binder's resync runs on a fake clock the test steps.
type env struct {
	t      *testing.T
	mgr    *manager.Manager
	clk    *clocktesting.FakeClock
	pvs    *rest.Resource[*corev1.PersistentVolume, *corev1.PersistentVolumeList]
	pvcs   *rest.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	nodes  *rest.Resource[*corev1.Node, *corev1.NodeList]
	scs    *rest.Resource[*storagev1.StorageClass, *storagev1.StorageClassList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]
}

func start(t *testing.T) *env {
	srv := testserver.Start(t, testserver.Options{})
	mgr, err := manager.New(manager.Options{Config: srv.RESTConfig(t), MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mgr.Client().CloseIdleConnections)
	c := mgr.Client()
	e := &env{t: t, mgr: mgr, clk: clocktesting.NewFakeClock(time.Now()),
		pvs:    rest.For[*corev1.PersistentVolume, *corev1.PersistentVolumeList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumes"), false),
		pvcs:   rest.For[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList](c, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), true).Namespace(ns),
		pods:   rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace(ns),
		nodes:  rest.For[*corev1.Node, *corev1.NodeList](c, corev1.SchemeGroupVersion.WithResource("nodes"), false),
		scs:    rest.For[*storagev1.StorageClass, *storagev1.StorageClassList](c, storagev1.SchemeGroupVersion.WithResource("storageclasses"), false),
		events: rest.For[*corev1.Event, *corev1.EventList](c, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
	for _, add := range []func() error{
		func() error {
			return persistentvolume.Add(mgr, persistentvolume.Options{Clock: e.clk, ResyncPeriod: time.Second})
		},
		func() error { return provisioner.Add(mgr, provisioner.Options{}) },
		func() error { return pvcprotection.Add(mgr, pvcprotection.Options{}) },
		func() error { return pvprotection.Add(mgr, pvprotection.Options{}) },
		func() error { return expand.Add(mgr, expand.Options{}) },
	} {
		if err := add(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	e.eventually("default class installed", func() bool {
		_, err := e.scs.Get(context.Background(), provisioner.DefaultClassName, metav1.GetOptions{})
		return err == nil
	})
	return e
}

// eventually polls cond for up to 20 s, stepping the fake clock a second
// every 200 ms so resyncs happen.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	e.until(what, testwait.Bool(cond))
}

// until is eventually with a condition that says what it saw last.
func (e *env) until(what string, cond func() error) {
	e.t.Helper()
	polls := 0
	testwait.UntilEvery(e.t, 45*time.Second, 20*time.Millisecond, what, func() error { // generous: CI runs many packages at once
		err := cond()
		if err == nil {
			return nil
		}
		if polls++; polls%10 == 0 {
			e.clk.Step(time.Second)
		}
		return err
	})
}

var ctx = context.Background()

func (e *env) claim(name, class, size string, edit ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	if class != "-" {
		c.Spec.StorageClassName = &class
	}
	for _, f := range edit {
		f(c)
	}
	out, err := e.pvcs.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) volume(name, class, size string, edit ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	e.t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{StorageClassName: class,
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}}}}
	for _, f := range edit {
		f(pv)
	}
	out, err := e.pvs.Create(ctx, pv, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) getClaim(name string) *corev1.PersistentVolumeClaim {
	c, err := e.pvcs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return c
}

func (e *env) getVolume(name string) *corev1.PersistentVolume {
	pv, err := e.pvs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return pv
}

func (e *env) waitClaimBound(name string) *corev1.PersistentVolumeClaim {
	e.t.Helper()
	var c *corev1.PersistentVolumeClaim
	e.until("claim "+name+" bound", func() error {
		switch c = e.getClaim(name); {
		case c == nil:
			return fmt.Errorf("no claim: %w", testwait.ErrNotYet)
		case c.Status.Phase != corev1.ClaimBound:
			return fmt.Errorf("class %v, phase %q, volume %q, annotations %v: %w",
				ptr.Deref(c.Spec.StorageClassName, "<nil>"), c.Status.Phase, c.Spec.VolumeName, c.Annotations, testwait.ErrNotYet)
		}
		return nil
	})
	return c
}

func (e *env) waitVolumePhase(name string, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
	e.t.Helper()
	var pv *corev1.PersistentVolume
	e.eventually("volume "+name+" "+string(phase), func() bool {
		pv = e.getVolume(name)
		return pv != nil && pv.Status.Phase == phase
	})
	return pv
}

// hasEvent reports whether the object got an event of reason with message.
func (e *env) hasEvent(name, reason, message string) bool {
	list, err := e.events.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String()})
	if err != nil {
		return false
	}
	for _, ev := range list.Items {
		if ev.Reason == reason && (message == "" || ev.Message == message) {
			return true
		}
	}
	return false
}

func (e *env) waitEvent(name, reason, message string) {
	e.t.Helper()
	e.eventually("event "+reason+" on "+name, func() bool { return e.hasEvent(name, reason, message) })
}

func (e *env) node(name string) {
	e.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name + "-host"}}}
	if _, err := e.nodes.Create(ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// pod creates a pod on node using the claim.
func (e *env) pod(name, node, claim string) {
	e.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}
	if _, err := e.pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) selectNode(claim, node string) {
	e.t.Helper()
	for {
		c := e.getClaim(claim)
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, "volume.kubernetes.io/selected-node", node)
		if _, err := e.pvcs.Update(ctx, c, metav1.UpdateOptions{}); err == nil {
			return
		} else if !isConflict(err) {
			e.t.Fatal(err)
		}
	}
}

func resourceOf(s string) resource.Quantity { return resource.MustParse(s) }

// metric returns the value of the metric with the labels (-1 when absent).
func (e *env) metric(name string, labels map[string]string) float64 {
	e.t.Helper()
	mfs, err := e.mgr.Registry().Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}
