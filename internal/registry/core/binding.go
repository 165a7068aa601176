package core

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

var (
	podsGVR    = corev1.SchemeGroupVersion.WithResource("pods")
	bindingGVK = corev1.SchemeGroupVersion.WithKind("Binding")
	podsGR     = podsGVR.GroupResource()
	bindingGR  = schema.GroupResource{Resource: "pods/binding"}
)

// bindingSubresource is pods/binding: the scheduler assigns a pod to a node.
func bindingSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "binding", Kind: bindingGVK, Verbs: []string{"create"},
		Action: &registry.Action{
			NewBody: func() runtime.Object { return &corev1.Binding{} },
			Do: func(ctx context.Context, env registry.Env, req registry.Request, body runtime.Object) (runtime.Object, error) {
				b := body.(*corev1.Binding)
				if b.Name != req.Name {
					return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
				}
				return bindPod(ctx, env, req, b)
			},
		},
	}
}

// bindingsResource is bindings, the older form of pods/binding: a POST of
// a Binding named as the pod. As kube-apiserver, its create drops the
// binding's UID (only pods/binding takes it as a precondition).
func bindingsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "bindings", Kind: "Binding", Singular: "binding", Namespaced: true,
		New: func() runtime.Object { return &corev1.Binding{} },
		Virtual: &registry.Virtual{
			Create: func(ctx context.Context, env registry.Env, req registry.Request, obj runtime.Object) (runtime.Object, error) {
				b := obj.(*corev1.Binding)
				if b.Name == "" {
					return nil, apierrors.NewBadRequest("Name parameter required.")
				}
				b.UID = ""
				req.Name = b.Name
				return bindPod(ctx, env, req, b)
			},
		},
		Attrs: func(runtime.Object) (labels.Set, fields.Set, error) { return nil, fields.Set{}, nil },
		Table: printers.For("", "Binding"),
	}
}

// validateBinding checks the target: a node (kind empty or Node) with a
// valid name.
func validateBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	t := b.Target
	if t.Kind != "" && t.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), t.Kind, []string{"Node", "<empty>"}))
	}
	if t.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	} else if t.Kind == "" || t.Kind == "Node" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(t.Name, false) {
			errs = append(errs, field.Invalid(field.NewPath("target", "name"), t.Name, msg))
		}
	}
	return errs
}

// bindPod assigns the pod req names to the binding's node, once, as
// kube-apiserver does: the binding's UID and resourceVersion are
// preconditions; a pod that is being deleted, already bound or still has
// scheduling gates is a 409; the binding's annotations and labels are
// copied onto the pod, its nominated node is cleared, and it is marked
// PodScheduled.
func bindPod(ctx context.Context, env registry.Env, req registry.Request, b *corev1.Binding) (runtime.Object, error) {
	if b.Namespace != "" && b.Namespace != req.Namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if errs := validateBinding(b); len(errs) > 0 {
		// As kube-apiserver: an error without a status, hence a 500.
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: errs.ToAggregate().Error(),
		}}
	}
	name := req.Name
	now := metav1.Unix(env.Clock().Now().Unix(), 0)
	_, err := env.Objects(podsGVR).Mutate(ctx, req.Namespace, name, func(obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		if err := checkBindingPreconditions(b, pod); err != nil {
			return err
		}
		var reason error
		switch {
		case pod.DeletionTimestamp != nil:
			reason = fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", name)
		case pod.Spec.NodeName != "":
			reason = fmt.Errorf("pod %v is already assigned to node %q", name, pod.Spec.NodeName)
		case len(pod.Spec.SchedulingGates) != 0:
			reason = fmt.Errorf("pod %v has non-empty .spec.schedulingGates", name)
		}
		if reason != nil {
			return apierrors.NewConflict(bindingGR, name, reason)
		}
		assignPod(pod, b, now)
		return nil
	}, req.DryRun)
	if err != nil {
		return nil, err
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated,
	}, nil
}

// checkBindingPreconditions compares the binding's UID and resourceVersion,
// when set, with the pod's.
func checkBindingPreconditions(b *corev1.Binding, pod *corev1.Pod) error {
	switch {
	case b.UID != "" && b.UID != pod.UID:
		return apierrors.NewConflict(podsGR, pod.Name, fmt.Errorf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
	case b.ResourceVersion != "" && b.ResourceVersion != pod.ResourceVersion:
		return apierrors.NewConflict(podsGR, pod.Name, fmt.Errorf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", b.ResourceVersion, pod.ResourceVersion))
	}
	return nil
}

// initContainerAnnotations are annotations of older releases a binding may
// not bring back.
var initContainerAnnotations = []string{
	"pod.beta.kubernetes.io/init-containers", "pod.alpha.kubernetes.io/init-containers",
	"pod.beta.kubernetes.io/init-container-statuses", "pod.alpha.kubernetes.io/init-container-statuses",
}

func assignPod(pod *corev1.Pod, b *corev1.Binding, now metav1.Time) {
	pod.Spec.NodeName = b.Target.Name
	pod.Status.NominatedNodeName = ""
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	maps.Copy(pod.Annotations, b.Annotations)
	for _, k := range initContainerAnnotations {
		delete(pod.Annotations, k)
	}
	if len(b.Labels) > 0 {
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		maps.Copy(pod.Labels, b.Labels)
	}
	setPodScheduled(pod, now)
}

// setPodScheduled sets the PodScheduled condition True, replacing the one
// there (its transition time kept when it was True already).
func setPodScheduled(pod *corev1.Pod, t metav1.Time) {
	c := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t}
	for i := range pod.Status.Conditions {
		if old := &pod.Status.Conditions[i]; old.Type == corev1.PodScheduled {
			if old.Status == corev1.ConditionTrue {
				c.LastTransitionTime = old.LastTransitionTime
			}
			*old = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
