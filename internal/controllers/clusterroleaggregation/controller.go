package clusterroleaggregation

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

// Kubernetes' names and defaults.
const (
	// ControllerName names the controller (queue, metrics, logs): the name
	// of kube-controller-manager's queue, so the workqueue metrics carry
	// the same label.
	ControllerName = "ClusterRoleAggregator"
	// FieldManager is the field manager of the controller's applies.
	FieldManager = "clusterrole-aggregation-controller"
	// DefaultWorkers is the workers kube-controller-manager runs it with.
	DefaultWorkers = 5
)

var clusterRoleGVR = rbacv1.SchemeGroupVersion.WithResource("clusterroles")

// Options tune the controller; the zero value means Kubernetes' defaults.
type Options struct {
	// Workers is the number of ClusterRoles synced at once (default
	// DefaultWorkers).
	Workers int
}

type reconciler struct {
	inf   *informer.Informer[*rbacv1.ClusterRole]
	roles *rest.Resource[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]
}

// ServiceAccount is the controller's identity: kube-controller-manager's
// ServiceAccount for it in kube-system (see manager.ClientFor).
const ServiceAccount = "clusterrole-aggregation-controller"

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	c, err := mgr.ClientFor(ServiceAccount)
	if err != nil {
		return fmt.Errorf("clusterroleaggregation: %w", err)
	}
	r := &reconciler{
		inf:   manager.InformerFor[*rbacv1.ClusterRole](mgr, clusterRoleGVR, false),
		roles: rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c, clusterRoleGVR, false),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return fmt.Errorf("clusterroleaggregation: %w", err)
	}
	if err := ctrl.Watch(controller.Kind(r.inf, "rbac.authorization.k8s.io/v1 clusterroles", r.aggregated)); err != nil {
		return fmt.Errorf("clusterroleaggregation: %w", err)
	}
	return mgr.Add(ctrl)
}

// aggregated maps any ClusterRole event to every ClusterRole with an
// aggregation rule.
func (r *reconciler) aggregated(*rbacv1.ClusterRole) []reconcile.Request {
	all, err := r.inf.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, cr := range all {
		if cr.AggregationRule != nil {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: cr.Name}})
		}
	}
	return out
}

// Reconcile implements reconcile.Reconciler for one ClusterRole.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cr, err := r.inf.Lister().Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get clusterrole %s from cache: %w", req.Name, err)
	}
	if cr.AggregationRule == nil {
		return reconcile.Result{}, nil
	}
	rules, err := r.union(cr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if equality.Semantic.DeepEqual(rules, cr.Rules) {
		return reconcile.Result{}, nil
	}
	if err := r.apply(ctx, cr.Name, rules); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply the aggregated rules of clusterrole %s: %w", cr.Name, err)
	}
	return reconcile.Result{}, nil
}

// union returns the rules of the ClusterRoles cr's selectors select: per
// selector, the roles by name (cr excluded), each rule once.
func (r *reconciler) union(cr *rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range cr.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&cr.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, fmt.Errorf("clusterrole %s: aggregation selector %d: %w", cr.Name, i, err)
		}
		selected, err := r.inf.Lister().List(sel)
		if err != nil {
			return nil, fmt.Errorf("list clusterroles from cache: %w", err)
		}
		slices.SortFunc(selected, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range selected {
			if s.Name == cr.Name {
				continue
			}
			for _, rule := range s.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
					rules = append(rules, *rule.DeepCopy())
				}
			}
		}
	}
	return rules, nil
}

// applyRole is the apply configuration the controller sends: the role's
// name and rules only, no rules when there are none.
type applyRole struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   applyMeta           `json:"metadata"`
	Rules      []rbacv1.PolicyRule `json:"rules,omitempty"`
}

type applyMeta struct {
	Name string `json:"name"`
}

func (r *reconciler) apply(ctx context.Context, name string, rules []rbacv1.PolicyRule) error {
	body, err := json.Marshal(applyRole{
		APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole",
		Metadata: applyMeta{Name: name}, Rules: rules,
	})
	if err != nil {
		return err
	}
	_, err = r.roles.Patch(ctx, name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)})
	return err
}
