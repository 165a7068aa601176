package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/rbacpolicy"
	"github.com/setpoint-dev/setpoint/rest"
)

var defaults = metav1.ListOptions{LabelSelector: rbacpolicy.BootstrappingLabel + "=" + rbacpolicy.BootstrappingValue}

// fetch lists the default objects of the reference and returns the policy
// and the aggregated roles' rules by name.
func fetch(ctx context.Context, c *rest.Client) (*rbacpolicy.Policy, map[string][]rbacv1.PolicyRule, error) {
	gv := rbacv1.SchemeGroupVersion
	crs, err := rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c, gv.WithResource("clusterroles"), false).List(ctx, defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("list clusterroles: %w", err)
	}
	crbs, err := rest.For[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList](c, gv.WithResource("clusterrolebindings"), false).List(ctx, defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("list clusterrolebindings: %w", err)
	}
	rs, err := rest.For[*rbacv1.Role, *rbacv1.RoleList](c, gv.WithResource("roles"), true).List(ctx, defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("list roles: %w", err)
	}
	rbs, err := rest.For[*rbacv1.RoleBinding, *rbacv1.RoleBindingList](c, gv.WithResource("rolebindings"), true).List(ctx, defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("list rolebindings: %w", err)
	}
	all, err := rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c, gv.WithResource("clusterroles"), false).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list clusterroles: %w", err)
	}
	if err := onlyDefaultsAggregated(crs.Items, all.Items); err != nil {
		return nil, nil, err
	}
	p := &rbacpolicy.Policy{}
	agg := map[string][]rbacv1.PolicyRule{}
	for _, r := range crs.Items {
		r.ObjectMeta = strip(r.ObjectMeta)
		if r.AggregationRule != nil {
			agg[r.Name] = r.Rules
			r.Rules = nil
		}
		p.ClusterRoles = append(p.ClusterRoles, r)
	}
	for _, b := range crbs.Items {
		b.ObjectMeta = strip(b.ObjectMeta)
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, b)
	}
	for _, r := range rs.Items {
		r.ObjectMeta = strip(r.ObjectMeta)
		p.Roles = append(p.Roles, r)
	}
	for _, b := range rbs.Items {
		b.ObjectMeta = strip(b.ObjectMeta)
		p.RoleBindings = append(p.RoleBindings, b)
	}
	sortPolicy(p)
	return p, agg, nil
}

// onlyDefaultsAggregated refuses a reference holding a ClusterRole of its
// own that an aggregation rule selects: its rules would be recorded as
// kube's.
func onlyDefaultsAggregated(defaults, all []rbacv1.ClusterRole) error {
	isDefault := map[string]bool{}
	for _, r := range defaults {
		isDefault[r.Name] = true
	}
	for _, r := range all {
		if isDefault[r.Name] {
			continue
		}
		for k := range r.Labels {
			if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
				return fmt.Errorf("the reference holds ClusterRole %s labelled %s: record from a reference without it", r.Name, k)
			}
		}
	}
	return nil
}

// strip keeps what the policy defines: name, namespace, labels and
// annotations.
func strip(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}

func sortPolicy(p *rbacpolicy.Policy) {
	key := func(m metav1.ObjectMeta) string { return m.Namespace + "/" + m.Name }
	slices.SortFunc(p.ClusterRoles, func(a, b rbacv1.ClusterRole) int { return strings.Compare(key(a.ObjectMeta), key(b.ObjectMeta)) })
	slices.SortFunc(p.ClusterRoleBindings, func(a, b rbacv1.ClusterRoleBinding) int {
		return strings.Compare(key(a.ObjectMeta), key(b.ObjectMeta))
	})
	slices.SortFunc(p.Roles, func(a, b rbacv1.Role) int { return strings.Compare(key(a.ObjectMeta), key(b.ObjectMeta)) })
	slices.SortFunc(p.RoleBindings, func(a, b rbacv1.RoleBinding) int { return strings.Compare(key(a.ObjectMeta), key(b.ObjectMeta)) })
}

// waitAggregated waits until the controller manager of a reference started
// here has filled the aggregated roles.
func waitAggregated(ctx context.Context, kubeconfig string) error {
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		return err
	}
	c, err := rest.New(cfg)
	if err != nil {
		return err
	}
	crs := rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](c, rbacv1.SchemeGroupVersion.WithResource("clusterroles"), false)
	for {
		list, err := crs.List(ctx, defaults)
		if err == nil && aggregatedFilled(list.Items) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the aggregated roles: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func aggregatedFilled(roles []rbacv1.ClusterRole) bool {
	n := 0
	for _, r := range roles {
		if r.AggregationRule != nil {
			if len(r.Rules) == 0 {
				return false
			}
			n++
		}
	}
	return n > 0
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
