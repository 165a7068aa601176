package core

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

var (
	podsGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	bindingGVK = corev1.SchemeGroupVersion.WithKind("Binding")
	podsGR     = podsGVR.GroupResource()
)

// bindingSubresource is pods/binding: the scheduler assigns a pod to a node.
func bindingSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "binding", Kind: bindingGVK, Verbs: []string{"create"},
		Action: &registry.Action{
			NewBody: func() runtime.Object { return &corev1.Binding{} },
			Do: func(ctx context.Context, env registry.Env, req registry.Request, body runtime.Object) (runtime.Object, error) {
				return bindPod(ctx, env, req, body.(*corev1.Binding))
			},
		},
	}
}

// bindPod sets spec.nodeName of the pod req names (or the binding names,
// for POST …/bindings) to the binding's target, once: a bound or deleting
// pod is a 409, as in Kubernetes.
func bindPod(ctx context.Context, env registry.Env, req registry.Request, b *corev1.Binding) (runtime.Object, error) {
	name := req.Name
	if name == "" {
		name = b.Name
	}
	if b.Name != "" && b.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the binding (%s) does not match the pod (%s)", b.Name, name))
	}
	if b.Target.Name == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		return nil, apierrors.NewInvalid(bindingGVK.GroupKind(), name, field.ErrorList{
			field.Required(field.NewPath("target", "name"), "a Node name is required")})
	}
	pods := env.Objects(podsGVR)
	now := env.Clock().Now()
	_, err := pods.Mutate(ctx, req.Namespace, name, func(obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return apierrors.NewConflict(podsGR, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if pod.DeletionTimestamp != nil {
			return apierrors.NewConflict(podsGR, name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", name))
		}
		if pod.Spec.NodeName != "" {
			return apierrors.NewConflict(podsGR, name, fmt.Errorf("pod %s is already assigned to node %q", name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = b.Target.Name
		setPodScheduled(pod, metav1.Unix(now.Unix(), 0))
		return nil
	}, req.DryRun)
	if err != nil {
		return nil, err
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated,
	}, nil
}

func setPodScheduled(pod *corev1.Pod, t metav1.Time) {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			c.Status, c.LastTransitionTime, c.Reason, c.Message = corev1.ConditionTrue, t, "", ""
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t,
	})
}
