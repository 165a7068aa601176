package validatingadmissionpolicystatus

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' names.
const (
	// ControllerName names the controller and is its field manager.
	ControllerName = "validatingadmissionpolicy-status-controller"
	// ServiceAccount is the controller's identity in kube-system.
	ServiceAccount = "validatingadmissionpolicy-status-controller"
)

var policiesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")

type reconciler struct {
	client   *rest.Client
	inf      *informer.Informer[*admissionregistrationv1.ValidatingAdmissionPolicy]
	policies *rest.Resource[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyList]
}

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager) error {
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("validatingadmissionpolicystatus: %w", err)
	}
	r := &reconciler{
		client:   c,
		inf:      manager.InformerFor[*admissionregistrationv1.ValidatingAdmissionPolicy](mgr, policiesGVR, false),
		policies: rest.For[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyList](c, policiesGVR, false),
	}
	ctrl, err := controller.New(ControllerName, r, mgr.ControllerOptions())
	if err != nil {
		return fmt.Errorf("validatingadmissionpolicystatus: %w", err)
	}
	src := controller.Kind(r.inf, "admissionregistration.k8s.io/v1 validatingadmissionpolicies", handler.Object[*admissionregistrationv1.ValidatingAdmissionPolicy]())
	if err := ctrl.Watch(src); err != nil {
		return fmt.Errorf("validatingadmissionpolicystatus: %w", err)
	}
	return mgr.Add(ctrl)
}

// statusApply is the apply configuration the controller owns.
type statusApply struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
		TypeChecking       struct {
			ExpressionWarnings []admissionregistrationv1.ExpressionWarning `json:"expressionWarnings,omitempty"`
		} `json:"typeChecking"`
	} `json:"status"`
}

// Reconcile type-checks one policy whose generation is not yet observed.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p, err := r.inf.Lister().Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if p.Generation <= p.Status.ObservedGeneration {
		return reconcile.Result{}, nil
	}
	var a statusApply
	a.APIVersion, a.Kind = "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"
	a.Metadata.Name = p.Name
	a.Status.ObservedGeneration = p.Generation
	a.Status.TypeChecking.ExpressionWarnings = check(ctx, newSchemas(r.client), p)
	body, err := json.Marshal(a)
	if err != nil {
		return reconcile.Result{}, err
	}
	force := true
	_, err = r.policies.Patch(ctx, p.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: ControllerName, Force: &force}, "status")
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, err
}
