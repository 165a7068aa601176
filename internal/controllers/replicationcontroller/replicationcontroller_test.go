package replicationcontroller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicaset"
	"github.com/setpoint-dev/setpoint/internal/controllers/replicationcontroller"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "default"

type env struct {
	*ctrltest.Env
	rcs    *rest.Resource[*corev1.ReplicationController, *corev1.ReplicationControllerList]
	events *rest.Resource[*corev1.Event, *corev1.EventList]
}

func start(t *testing.T) *env {
	e := ctrltest.Start(t, func(e *ctrltest.Env) error { return replicationcontroller.Add(e.Mgr, replicaset.Options{}) })
	return &env{Env: e,
		rcs: rest.For[*corev1.ReplicationController, *corev1.ReplicationControllerList](e.Client,
			corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), true).Namespace(ns),
		events: rest.For[*corev1.Event, *corev1.EventList](e.Client, corev1.SchemeGroupVersion.WithResource("events"), true).Namespace(ns),
	}
}

func newRC(name string, replicas int32) *corev1.ReplicationController {
	sel := map[string]string{"app": name}
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &replicas, Selector: sel,
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		},
	}
}

// pods lists the active pods the RC controls.
func (e *env) pods(rc *corev1.ReplicationController) []corev1.Pod {
	e.T.Helper()
	list, err := e.Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == rc.UID && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (e *env) wait(name string, n int) *corev1.ReplicationController {
	e.T.Helper()
	var rc *corev1.ReplicationController
	e.Eventually(fmt.Sprintf("%s with %d pods", name, n), func() error {
		var err error
		rc, err = e.rcs.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := len(e.pods(rc)); got != n {
			return fmt.Errorf("%d pods", got)
		}
		st := rc.Status
		if st.Replicas != int32(n) || st.FullyLabeledReplicas != int32(n) || st.ObservedGeneration != rc.Generation {
			return fmt.Errorf("status %+v at generation %d", st, rc.Generation)
		}
		return nil
	})
	return rc
}

// TestReplicationControllerLife: pods from the template with a v1
// ReplicationController controller reference; scaling through the scale
// subresource (kubectl scale rc); readiness in status; events worded and
// sourced as kube's; an orphan adopted.
func TestReplicationControllerLife(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	if _, err := e.Pods(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := e.rcs.Create(ctx, newRC("web", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := e.wait("web", 3)
	adopted := false
	for _, p := range e.pods(rc) {
		ref := metav1.GetControllerOf(&p)
		if ref.APIVersion != "v1" || ref.Kind != "ReplicationController" || ref.Name != "web" || ref.UID != created.UID ||
			ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Fatalf("controller reference %+v", ref)
		}
		adopted = adopted || p.Name == "orphan"
		if p.Name != "orphan" && !strings.HasPrefix(p.Name, "web-") {
			t.Fatalf("pod name %s", p.Name)
		}
	}
	if !adopted {
		t.Fatal("orphan not adopted")
	}

	// kubectl scale rc web --replicas=5 writes the scale subresource.
	scales := rest.For[*autoscalingv1.Scale, *autoscalingv1.Scale](e.Client,
		corev1.SchemeGroupVersion.WithResource("replicationcontrollers"), true).Namespace(ns)
	patch := []byte(`{"spec":{"replicas":5}}`)
	if _, err := scales.Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	e.wait("web", 5)

	// Two pods ready.
	for i, p := range e.pods(rc)[:2] {
		e.SetPodStatus(ns, p.Name, fmt.Sprintf("10.0.0.%d", i+1), true, corev1.PodRunning)
	}
	e.Eventually("ready and available replicas", func() error {
		cur, err := e.rcs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Status.ReadyReplicas != 2 || cur.Status.AvailableReplicas != 2 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	if _, err := scales.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	e.wait("web", 1)

	e.Eventually("events", func() error {
		list, err := e.events.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, ev := range list.Items {
			if ev.InvolvedObject.Kind != "ReplicationController" || ev.InvolvedObject.Name != "web" {
				continue
			}
			if ev.Source.Component != "replication-controller" && ev.ReportingController != "replication-controller" {
				return fmt.Errorf("event from %+v / %q", ev.Source, ev.ReportingController)
			}
			switch {
			case ev.Reason == "SuccessfulCreate" && strings.HasPrefix(ev.Message, "Created pod: web-"),
				ev.Reason == "SuccessfulDelete" && strings.HasPrefix(ev.Message, "Deleted pod: "):
				seen[ev.Reason] = true
			}
		}
		if !seen["SuccessfulCreate"] || !seen["SuccessfulDelete"] {
			return fmt.Errorf("events seen %v", seen)
		}
		return nil
	})
}

// TestReplicaFailure: pods the API server rejects give the ReplicaFailure
// condition (reason FailedCreate) and FailedCreate events; fixing the
// template clears it.
func TestReplicaFailure(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rc := newRC("bad", 2)
	rc.Spec.Template.Finalizers = []string{"not a valid finalizer!"}
	if _, err := e.rcs.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("ReplicaFailure", func() error {
		cur, err := e.rcs.Get(ctx, "bad", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range cur.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure && c.Status == corev1.ConditionTrue &&
				c.Reason == "FailedCreate" && strings.Contains(c.Message, "finalizer") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", cur.Status.Conditions)
	})
	for range 20 {
		cur, err := e.rcs.Get(ctx, "bad", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Spec.Template.Finalizers = nil
		if _, err = e.rcs.Update(ctx, cur, metav1.UpdateOptions{}); err == nil {
			break
		}
	}
	e.wait("bad", 2)
	e.Eventually("condition cleared", func() error {
		cur, err := e.rcs.Get(ctx, "bad", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(cur.Status.Conditions) != 0 {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		return nil
	})
}
