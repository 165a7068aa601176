package application_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/examples/application"
)

// controllerRef is the owner reference the operator sets to app.
func controllerRef(app *application.Application) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: application.GroupVersion.String(), Kind: application.Kind, Name: app.Name,
		UID: app.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// deploymentMismatch returns "" when d is the Deployment app asks for
// (owner reference, replicas, selector, pod labels, one container with
// the image and port) and says what differs otherwise.
func deploymentMismatch(d *appsv1.Deployment, app *application.Application, replicas, port int32, image string) string {
	if d == nil {
		return "no deployment"
	}
	pod := d.Spec.Template
	switch {
	case len(d.OwnerReferences) != 1 || !reflect.DeepEqual(d.OwnerReferences[0], controllerRef(app)):
		return fmt.Sprintf("ownerReferences %+v", d.OwnerReferences)
	case ptr.Deref(d.Spec.Replicas, -1) != replicas:
		return fmt.Sprintf("replicas %d, want %d", ptr.Deref(d.Spec.Replicas, -1), replicas)
	case d.Spec.Selector == nil || !reflect.DeepEqual(d.Spec.Selector.MatchLabels, map[string]string{"app": app.Name}):
		return fmt.Sprintf("selector %+v", d.Spec.Selector)
	case pod.Labels["app"] != app.Name:
		return fmt.Sprintf("pod labels %v", pod.Labels)
	case len(pod.Spec.Containers) != 1:
		return fmt.Sprintf("%d containers", len(pod.Spec.Containers))
	case pod.Spec.Containers[0].Image != image:
		return fmt.Sprintf("image %q, want %q", pod.Spec.Containers[0].Image, image)
	case len(pod.Spec.Containers[0].Ports) != 1 || pod.Spec.Containers[0].Ports[0].ContainerPort != port:
		return fmt.Sprintf("container ports %+v, want %d", pod.Spec.Containers[0].Ports, port)
	}
	return ""
}

// serviceMismatch returns "" when s is the Service app asks for.
func serviceMismatch(s *corev1.Service, app *application.Application, port int32) string {
	if s == nil {
		return "no service"
	}
	want := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}
	switch {
	case len(s.OwnerReferences) != 1 || !reflect.DeepEqual(s.OwnerReferences[0], controllerRef(app)):
		return fmt.Sprintf("ownerReferences %+v", s.OwnerReferences)
	case s.Spec.Type != corev1.ServiceTypeClusterIP || s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone:
		return fmt.Sprintf("type %s clusterIP %q", s.Spec.Type, s.Spec.ClusterIP)
	case !reflect.DeepEqual(s.Spec.Selector, map[string]string{"app": app.Name}):
		return fmt.Sprintf("selector %v", s.Spec.Selector)
	case !reflect.DeepEqual(s.Spec.Ports, want):
		return fmt.Sprintf("ports %+v, want %+v", s.Spec.Ports, want)
	}
	return ""
}

// waitRunning waits until the Application's status is Running with
// replicas ready, describes its current generation (conditions included),
// and that many pods labelled app=<name> really run and are ready.
func (f *fixture) waitRunning(t *testing.T, name string, replicas int32) *application.Application {
	t.Helper()
	var app *application.Application
	eventually(t, name+" running with "+fmt.Sprint(replicas), func() string {
		app = get[application.Application](t, f, name)
		if app == nil {
			return "no application"
		}
		st := app.Status
		avail := meta.FindStatusCondition(st.Conditions, application.ConditionAvailable)
		prog := meta.FindStatusCondition(st.Conditions, application.ConditionProgressing)
		switch {
		case st.Phase != application.PhaseRunning || st.ReadyReplicas != replicas || st.ObservedGeneration != app.Generation:
			return fmt.Sprintf("phase %s ready %d observedGeneration %d (generation %d)", st.Phase, st.ReadyReplicas, st.ObservedGeneration, app.Generation)
		case avail == nil || avail.Status != metav1.ConditionTrue || avail.ObservedGeneration != app.Generation:
			return fmt.Sprintf("Available %+v", avail)
		case prog == nil || prog.Status != metav1.ConditionFalse || prog.Reason != application.ReasonRolloutComplete || prog.ObservedGeneration != app.Generation:
			return fmt.Sprintf("Progressing %+v", prog)
		}
		list := &corev1.PodList{}
		if err := f.client.List(context.Background(), list, client.InNamespace("default"), client.MatchingLabels{"app": name}); err != nil {
			return err.Error()
		}
		var ready int32
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
				ready++
			}
		}
		if ready != replicas {
			return fmt.Sprintf("%d pods running and ready", ready)
		}
		return ""
	})
	return app
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestApplicationLifecycle: an Application gets its Deployment, Service
// (controller references) and record, a finalizer, and a status that
// reaches Running once its pods really run; scaling and a new image reach
// the Deployment and the status follows; deleting it removes the record
// before it goes, and the garbage collector then removes the Deployment
// and the Service. Every step leaves its event.
func TestApplicationLifecycle(t *testing.T) {
	f := start(t, true)
	ctx := context.Background()
	app := f.create(t, newApp("web", "nginx:1.25", 2, 8080))

	eventually(t, "deployment and service", func() string {
		if why := deploymentMismatch(get[appsv1.Deployment](t, f, "web"), app, 2, 8080, "nginx:1.25"); why != "" {
			return why
		}
		return serviceMismatch(get[corev1.Service](t, f, "web"), app, 8080)
	})
	rec := f.record(t, application.RecordName("default", "web"))
	if rec == nil || rec.Data["uid"] != string(app.UID) || rec.Data["name"] != "web" || rec.Data["namespace"] != "default" {
		t.Fatalf("record: %+v", rec)
	}
	app = f.waitRunning(t, "web", 2)
	if !reflect.DeepEqual(app.Finalizers, []string{application.Finalizer}) {
		t.Fatalf("finalizers %v", app.Finalizers)
	}
	uid := string(app.UID)
	f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonCreated, "Created Deployment web")
	f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonCreated, "Created Service web")
	f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonCreated, "Created record ConfigMap setpoint-records/application-default-web")
	ev := f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonReady, "2 of 2 replicas ready")
	if ev.InvolvedObject.Kind != application.Kind || ev.InvolvedObject.APIVersion != "apps.setpoint.dev/v1" || ev.Source.Component != application.DefaultName {
		t.Fatalf("event about %+v from %+v", ev.InvolvedObject, ev.Source)
	}

	// Scale: the Deployment follows, and so does the status.
	f.updateApp(t, "web", func(a *application.Application) { a.Spec.Replicas = ptr.To[int32](3) })
	eventually(t, "deployment scaled", func() string {
		return deploymentMismatch(get[appsv1.Deployment](t, f, "web"), app, 3, 8080, "nginx:1.25")
	})
	f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonUpdated, "Updated Deployment web")
	f.waitRunning(t, "web", 3)

	// A new image rolls out.
	f.updateApp(t, "web", func(a *application.Application) { a.Spec.Image = "nginx:1.27" })
	eventually(t, "new image", func() string {
		return deploymentMismatch(get[appsv1.Deployment](t, f, "web"), app, 3, 8080, "nginx:1.27")
	})
	f.waitRunning(t, "web", 3)
	d := get[appsv1.Deployment](t, f, "web")
	if d.Status.UpdatedReplicas != 3 || d.Status.Replicas != 3 {
		t.Fatalf("running before the rollout ended: deployment status %+v", d.Status)
	}

	// Delete: the finalizer deletes the record first, then the
	// Application goes and the garbage collector takes the rest.
	if err := f.client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	f.waitEvent(t, uid, corev1.EventTypeNormal, application.ReasonCleanup, "Deleted record ConfigMap setpoint-records/application-default-web")
	eventually(t, "everything gone", func() string {
		switch {
		case f.record(t, application.RecordName("default", "web")) != nil:
			return "record still there"
		case get[application.Application](t, f, "web") != nil:
			return "application still there"
		case get[appsv1.Deployment](t, f, "web") != nil:
			return "deployment still there"
		case get[corev1.Service](t, f, "web") != nil:
			return "service still there"
		}
		return ""
	})
}
