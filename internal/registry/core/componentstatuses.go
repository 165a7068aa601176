package core

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// componentStatusDeprecation is the warning kube-apiserver v1.37 sends with
// every answer about componentstatuses.
const componentStatusDeprecation = "v1 ComponentStatus is deprecated in v1.19+"

// componentStatusesResource serves componentstatuses, computed on each
// request, never stored: controller-manager, scheduler and etcd-0, as
// kube-apiserver lists them. kube-apiserver probes the /healthz of a
// controller manager and a scheduler on their default ports of the local
// host; setpoint's components serve no such port, so their health is what
// the API server can see of them: a leader holding an unexpired Lease
// (kube-system/kube-controller-manager, kube-system/kube-scheduler), as
// setpoint's components and Kubernetes' both keep. etcd-0 is the store:
// healthy when it answers.
func componentStatusesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "componentstatuses", Kind: "ComponentStatus", ListKind: "ComponentStatusList",
		Singular: "componentstatus", ShortNames: []string{"cs"},
		Deprecation: componentStatusDeprecation,
		New:         func() runtime.Object { return &corev1.ComponentStatus{} },
		NewList:     func() runtime.Object { return &corev1.ComponentStatusList{} },
		Virtual: &registry.Virtual{
			Get:  getComponentStatus,
			List: listComponentStatuses,
		},
		Attrs: strategy.Attrs[*corev1.ComponentStatus](false, nil),
		Table: printers.For("", "ComponentStatus"),
	}
}

// componentNames are the components reported, in the order listed.
var componentNames = []string{"controller-manager", "scheduler", "etcd-0"}

// componentLeases are the Leases whose holders are the components.
var componentLeases = map[string]string{
	"controller-manager": "kube-controller-manager",
	"scheduler":          "kube-scheduler",
}

// componentProbeTimeout bounds each check, as kube-apiserver's probes.
const componentProbeTimeout = 20 * time.Second

var componentStatusGR = schema.GroupResource{Resource: "componentstatus"}

func getComponentStatus(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	for _, name := range componentNames {
		if name == req.Name {
			return componentStatus(ctx, env, name), nil
		}
	}
	return nil, apierrors.NewNotFound(componentStatusGR, req.Name)
}

// listComponentStatuses checks every component, keeping those the
// request's selectors match (no component has labels).
func listComponentStatuses(ctx context.Context, env registry.Env, req registry.Request) (runtime.Object, error) {
	ls, fs, err := componentSelectors(req)
	if err != nil {
		return nil, err
	}
	list := &corev1.ComponentStatusList{Items: []corev1.ComponentStatus{}}
	for _, name := range componentNames {
		set := fields.Set{"metadata.name": name, "metadata.namespace": ""}
		if !ls.Matches(labels.Set{}) || !fs.Matches(set) {
			continue
		}
		list.Items = append(list.Items, *componentStatus(ctx, env, name))
	}
	return list, nil
}

// componentSelectors parses the selectors of a list request; field
// selectors may name metadata.name and metadata.namespace only.
func componentSelectors(req registry.Request) (labels.Selector, fields.Selector, error) {
	ls, err := labels.Parse(req.Query.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(req.Query.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	for _, r := range fs.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q",
				r.Field, "metadata.name", "metadata.namespace"))
		}
	}
	return ls, fs, nil
}

// componentStatus checks one component: Healthy True with message "ok"
// (what a healthy /healthz answers), False with the reason otherwise, as
// kube-apiserver: the reason in the message, or the error of a store that
// does not answer in the error; Unknown with the error when the Lease
// cannot be read.
func componentStatus(ctx context.Context, env registry.Env, name string) *corev1.ComponentStatus {
	ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
	defer cancel()
	cond := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
	if lease, ok := componentLeases[name]; ok {
		if msg, err := leaseHeld(ctx, env, lease); err != nil {
			cond.Status, cond.Message, cond.Error = corev1.ConditionUnknown, "", err.Error()
		} else if msg != "" {
			cond.Status, cond.Message = corev1.ConditionFalse, msg
		}
	} else if _, err := env.Storage().CurrentRevision(ctx); err != nil {
		cond.Status, cond.Message, cond.Error = corev1.ConditionFalse, "", err.Error()
	}
	cs := &corev1.ComponentStatus{Conditions: []corev1.ComponentCondition{cond}}
	cs.Name = name
	return cs
}

var leasesGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// leaseHeld returns why kube-system/<name> has no live holder, "" when it
// has one.
func leaseHeld(ctx context.Context, env registry.Env, name string) (string, error) {
	leases := env.Objects(leasesGVR)
	if leases == nil {
		return "", fmt.Errorf("leases are not served")
	}
	what := "lease " + metav1.NamespaceSystem + "/" + name
	obj, err := leases.Get(ctx, metav1.NamespaceSystem, name)
	switch {
	case apierrors.IsNotFound(err):
		return "no leader: " + what + " not found", nil
	case err != nil:
		return "", fmt.Errorf("get %s: %w", what, err)
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return "", fmt.Errorf("%s: unexpected %T", what, obj)
	}
	s := &l.Spec
	switch {
	case s.HolderIdentity == nil || *s.HolderIdentity == "":
		return "no leader: " + what + " has no holder", nil
	case s.RenewTime == nil || s.LeaseDurationSeconds == nil:
		return fmt.Sprintf("no leader: %s held by %s was never renewed", what, *s.HolderIdentity), nil
	}
	expiry := s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second)
	if !env.Clock().Now().Before(expiry) {
		return fmt.Sprintf("no leader: %s held by %s expired at %s", what, *s.HolderIdentity, expiry.UTC().Format(time.RFC3339)), nil
	}
	return "", nil
}
