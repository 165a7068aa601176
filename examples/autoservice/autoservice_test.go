package autoservice_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/client"
	"github.com/setpoint-dev/setpoint/examples/autoservice"
)

func port(name string, proto corev1.Protocol, p int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: p, TargetPort: intstr.FromInt32(p)}
}

// matches returns "" when svc is the Service d asks for, with ports
// want, and says what differs otherwise.
func matches(svc *corev1.Service, d *appsv1.Deployment, want []corev1.ServicePort) string {
	if svc == nil {
		return "no service"
	}
	var got []corev1.ServicePort
	for _, p := range svc.Spec.Ports {
		got = append(got, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port, TargetPort: p.TargetPort, NodePort: p.NodePort})
	}
	wantRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	switch {
	case svc.Spec.Type != corev1.ServiceTypeClusterIP:
		return fmt.Sprintf("type %q", svc.Spec.Type)
	case !maps.Equal(svc.Spec.Selector, d.Spec.Selector.MatchLabels):
		return fmt.Sprintf("selector %v, want %v", svc.Spec.Selector, d.Spec.Selector.MatchLabels)
	case !reflect.DeepEqual(got, want):
		return fmt.Sprintf("ports %+v, want %+v", got, want)
	case svc.Labels[autoservice.ManagedByLabel] != autoservice.ManagedBy:
		return fmt.Sprintf("labels %v", svc.Labels)
	case len(svc.OwnerReferences) != 1 || !reflect.DeepEqual(svc.OwnerReferences[0], wantRef):
		return fmt.Sprintf("ownerReferences %+v, want [%+v]", svc.OwnerReferences, wantRef)
	case svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return fmt.Sprintf("clusterIP %q", svc.Spec.ClusterIP)
	}
	return ""
}

// TestServiceFromDeployment: an annotated Deployment gets its Service
// (type, selector, ports from the containers or 80, label, controller
// reference) and a ServiceCreated event; Deployments without the
// annotation or with another value get none.
func TestServiceFromDeployment(t *testing.T) {
	f := start(t)
	// One worker: these two are reconciled before the annotated ones.
	f.create(t, deployment("plain", ""))
	f.create(t, deployment("maybe", "yes"))
	web := f.create(t, deployment("web", "true",
		[]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		[]corev1.ContainerPort{{ContainerPort: 5353, Protocol: corev1.ProtocolUDP}, {ContainerPort: 9090}, {ContainerPort: 8080}}))
	bare := f.create(t, deployment("bare", "true"))

	wantWeb := []corev1.ServicePort{port("http", "TCP", 8080), port("udp-5353", "UDP", 5353), port("tcp-9090", "TCP", 9090)}
	eventually(t, "web-service", func() string { return matches(f.service(t, "web-service"), web, wantWeb) })
	eventually(t, "bare-service", func() string {
		return matches(f.service(t, "bare-service"), bare, []corev1.ServicePort{port("", "TCP", 80)})
	})
	for _, name := range []string{"plain-service", "maybe-service"} {
		if s := f.service(t, name); s != nil {
			t.Fatalf("%s exists for a Deployment that does not ask for it: %+v", name, s.Spec)
		}
	}
	ev := f.waitEvent(t, string(web.UID), corev1.EventTypeNormal, autoservice.ReasonCreated, "Created Service web-service")
	if ev.InvolvedObject.Kind != "Deployment" || ev.InvolvedObject.Name != "web" || ev.Source.Component != autoservice.DefaultName {
		t.Fatalf("event is about %+v from %+v", ev.InvolvedObject, ev.Source)
	}
}

// TestServiceKeptAsDesired: a deleted Service comes back, hand edits of
// what we own are reverted (others' labels and the clusterIP stay), a
// change of the pod template's ports reaches the Service, and an orphaned
// Service of ours is adopted again.
func TestServiceKeptAsDesired(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	web := f.create(t, deployment("web", "true", []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}))
	want := []corev1.ServicePort{port("http", "TCP", 8080)}
	eventually(t, "service created", func() string { return matches(f.service(t, "web-service"), web, want) })
	first := f.service(t, "web-service")

	if err := f.client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "service recreated", func() string {
		s := f.service(t, "web-service")
		if s != nil && s.UID == first.UID {
			return "still the first service"
		}
		return matches(s, web, want)
	})
	ev := f.waitEvent(t, string(web.UID), corev1.EventTypeNormal, autoservice.ReasonCreated, "web-service")
	eventually(t, "second ServiceCreated counted", func() string {
		e := &corev1.Event{}
		if err := f.client.Get(ctx, key(ev.Name), e); err != nil || e.Count < 2 {
			return fmt.Sprintf("count %v, err %v", e.Count, err)
		}
		return ""
	})

	second := f.service(t, "web-service")
	f.updateService(t, "web-service", func(s *corev1.Service) {
		s.Spec.Selector = map[string]string{"app": "someone-else"}
		s.Spec.Ports = []corev1.ServicePort{port("", "TCP", 1234)}
		delete(s.Labels, autoservice.ManagedByLabel)
		s.Labels["team"] = "payments"
	})
	eventually(t, "hand edit reverted", func() string {
		s := f.service(t, "web-service")
		if why := matches(s, web, want); why != "" {
			return why
		}
		if s.Labels["team"] != "payments" || s.Spec.ClusterIP != second.Spec.ClusterIP || s.UID != second.UID {
			return fmt.Sprintf("the edit did more than revert: labels %v clusterIP %s uid %s", s.Labels, s.Spec.ClusterIP, s.UID)
		}
		return ""
	})
	f.waitEvent(t, string(web.UID), corev1.EventTypeNormal, autoservice.ReasonUpdated, "Updated Service web-service")

	f.updateDeployment(t, "web", func(d *appsv1.Deployment) {
		c := &d.Spec.Template.Spec.Containers[0]
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090})
	})
	want = []corev1.ServicePort{port("http", "TCP", 8080), port("metrics", "TCP", 9090)}
	eventually(t, "new container port on the service", func() string { return matches(f.service(t, "web-service"), web, want) })

	// Orphaned (as `kubectl delete deployment --cascade=orphan` leaves it),
	// but still labelled ours: adopted.
	f.updateService(t, "web-service", func(s *corev1.Service) { s.OwnerReferences = nil })
	eventually(t, "orphan adopted", func() string { return matches(f.service(t, "web-service"), web, want) })
}

// TestAnnotationControlsService: removing the annotation deletes the
// Service (ServiceDeleted event), setting it again brings a new one, and
// any value but "true" deletes it again.
func TestAnnotationControlsService(t *testing.T) {
	f := start(t)
	web := f.create(t, deployment("web", "true"))
	want := []corev1.ServicePort{port("", "TCP", 80)}
	eventually(t, "service created", func() string { return matches(f.service(t, "web-service"), web, want) })
	first := f.service(t, "web-service")

	gone := func() string {
		if s := f.service(t, "web-service"); s != nil {
			return fmt.Sprintf("service %s still there", s.UID)
		}
		return ""
	}
	f.setAnnotation(t, "web", "")
	eventually(t, "service deleted after the annotation was removed", gone)
	f.waitEvent(t, string(web.UID), corev1.EventTypeNormal, autoservice.ReasonDeleted, "Deleted Service web-service")

	f.setAnnotation(t, "web", "true")
	eventually(t, "service back", func() string {
		s := f.service(t, "web-service")
		if s != nil && s.UID == first.UID {
			return "the old service"
		}
		return matches(s, web, want)
	})

	f.setAnnotation(t, "web", "false")
	eventually(t, `service deleted after annotation "false"`, gone)
}

// TestDeploymentDeletionCollectsService: deleting the Deployment, in the
// background or in the foreground, removes its Service through the
// garbage collector.
func TestDeploymentDeletionCollectsService(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	for name, policy := range map[string]metav1.DeletionPropagation{
		"web-bg": metav1.DeletePropagationBackground, "web-fg": metav1.DeletePropagationForeground} {
		d := f.create(t, deployment(name, "true"))
		svcName := autoservice.ServiceName(d.Name)
		eventually(t, svcName+" created", func() string {
			return matches(f.service(t, svcName), d, []corev1.ServicePort{port("", "TCP", 80)})
		})
		if err := f.client.Delete(ctx, d, client.PropagationPolicy(policy)); err != nil {
			t.Fatal(err)
		}
		eventually(t, string(policy)+" deletion", func() string {
			if s := f.service(t, svcName); s != nil {
				return "service still there"
			}
			if err := f.client.Get(ctx, key(d.Name), &appsv1.Deployment{}); err == nil {
				return "deployment still there"
			}
			return ""
		})
	}
}
