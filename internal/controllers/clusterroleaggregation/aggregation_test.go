package clusterroleaggregation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	"go.uber.org/goleak"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/internal/controllers/clusterroleaggregation"
	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorded returns the aggregated roles' rules as the reference's
// controller manager wrote them.
func recorded(t *testing.T) map[string][]rbacv1.PolicyRule {
	t.Helper()
	data, err := os.ReadFile("../../rbacpolicy/testdata/aggregated.json")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]rbacv1.PolicyRule
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func start(t *testing.T) (*ctrltest.Env, *rest.Resource[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]) {
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		return clusterroleaggregation.Add(e.Mgr, clusterroleaggregation.Options{})
	})
	return env, rest.For[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](env.Client, rbacv1.SchemeGroupVersion.WithResource("clusterroles"), false)
}

func rulesOf(ctx context.Context, crs *rest.Resource[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList], name string) ([]rbacv1.PolicyRule, error) {
	cr, err := crs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return cr.Rules, nil
}

// TestAggregation: admin, edit and view of a new server become what
// kube-controller-manager makes of them; a ClusterRole labelled
// aggregate-to-view adds its rules to view (and through view to edit and
// admin); changing its rules changes theirs; removing the label takes them
// away again.
func TestAggregation(t *testing.T) {
	env, crs := start(t)
	ctx := context.Background()
	want := recorded(t)
	checkDefaults(t, env, crs, want)
	custom := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}
	if _, err := crs.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-view", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules:      []rbacv1.PolicyRule{custom, want["view"][0]}, // the second is view's already: not repeated
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	has := func(name string, rule rbacv1.PolicyRule, present bool) func() error {
		return func() error {
			got, err := rulesOf(ctx, crs, name)
			if err != nil {
				return err
			}
			// Kube's order: the custom role sorts after system:aggregate-to-view.
			wantRules := slices.Clone(want[name])
			if present {
				wantRules = append(wantRules, rule)
			}
			if name != "view" {
				if !present && slices.ContainsFunc(got, func(r rbacv1.PolicyRule) bool { return reflect.DeepEqual(r, rule) }) {
					return fmt.Errorf("%s still has %+v", name, rule)
				}
				if present && !slices.ContainsFunc(got, func(r rbacv1.PolicyRule) bool { return reflect.DeepEqual(r, rule) }) {
					return fmt.Errorf("%s lacks %+v", name, rule)
				}
				return nil
			}
			if !reflect.DeepEqual(got, wantRules) {
				return fmt.Errorf("view rules\n got %+v\nwant %+v", got, wantRules)
			}
			return nil
		}
	}
	for _, name := range []string{"view", "edit", "admin"} {
		env.Eventually(name+" gains the custom rule", has(name, custom, true))
	}
	// A changed rule replaces the old one.
	changed := rbacv1.PolicyRule{Verbs: []string{"watch"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}
	patch := `{"rules":[{"verbs":["watch"],"apiGroups":["example.com"],"resources":["widgets"]}]}`
	if _, err := crs.Patch(ctx, "widgets-view", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("view follows the changed rule", has("view", changed, true))
	env.Eventually("admin follows the changed rule", has("admin", changed, true))
	env.Eventually("the old rule is gone from admin", has("admin", custom, false))
	// Without the label the rule goes.
	if _, err := crs.Patch(ctx, "widgets-view", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"rbac.authorization.k8s.io/aggregate-to-view":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		env.Eventually(name+" loses the custom rule", has(name, changed, false))
	}
	env.Eventually("view is kube's again", func() error {
		got, err := rulesOf(ctx, crs, "view")
		if err == nil && !reflect.DeepEqual(got, want["view"]) {
			err = fmt.Errorf("view has %d rules", len(got))
		}
		return err
	})
}

// TestOwnAggregatedRole: a user's aggregated ClusterRole gathers the rules
// of the roles it selects, itself excluded, selector by selector; with no
// role selected its rules are emptied.
func TestOwnAggregatedRole(t *testing.T) {
	env, crs := start(t)
	ctx := context.Background()
	r1 := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	r2 := rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	mk := func(name string, labels map[string]string, rules ...rbacv1.PolicyRule) {
		t.Helper()
		if _, err := crs.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := crs.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"a": "1"}},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"b": "1"}}, {MatchLabels: map[string]string{"a": "1"}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mk("z-first", map[string]string{"b": "1"}, r2)
	mk("a-second", map[string]string{"a": "1"}, r1, r2)
	env.Eventually("team aggregated", func() error {
		got, err := rulesOf(ctx, crs, "team")
		if err == nil && !reflect.DeepEqual(got, []rbacv1.PolicyRule{r2, r1}) {
			err = fmt.Errorf("rules %+v", got)
		}
		return err
	})
	for _, name := range []string{"z-first", "a-second"} {
		if err := crs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually("team emptied", func() error {
		got, err := rulesOf(ctx, crs, "team")
		if err == nil && len(got) != 0 {
			err = fmt.Errorf("rules %+v", got)
		}
		return err
	})
}

// checkDefaults waits until admin, edit and view hold the rules
// kube-controller-manager gives them, rule for rule and in order, written
// by the controller's field manager.
func checkDefaults(t *testing.T, env *ctrltest.Env, crs *rest.Resource[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList], want map[string][]rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	for name, rules := range want {
		env.Eventually("aggregated "+name, func() error {
			got, err := rulesOf(ctx, crs, name)
			if err == nil && !reflect.DeepEqual(got, rules) {
				err = fmt.Errorf("%d rules, want %d", len(got), len(rules))
			}
			return err
		})
		cr, err := crs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cr.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == clusterroleaggregation.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply
		}) {
			t.Errorf("%s: no apply by %s in %+v", name, clusterroleaggregation.FieldManager, cr.ManagedFields)
		}
	}
}
