package authorizer

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

type fixed struct {
	d      Decision
	reason string
	err    error
	rules  []ResourceRule
}

func (f fixed) Authorize(context.Context, Attributes) (Decision, string, error) {
	return f.d, f.reason, f.err
}
func (f fixed) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return f.rules, nil, f.err != nil, f.err
}

// TestUnion pins kube-apiserver's union: first Allow or Deny wins with its
// own reason and error; otherwise NoOpinion with the reasons joined by
// newlines and the errors aggregated.
func TestUnion(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name       string
		chain      []Authorizer
		want       Decision
		wantReason string
		wantErr    string
	}{
		{"allow after no opinion", []Authorizer{fixed{d: DecisionNoOpinion, reason: "a"}, fixed{d: DecisionAllow, reason: "b"}}, DecisionAllow, "b", ""},
		{"deny stops", []Authorizer{fixed{d: DecisionDeny, reason: "no"}, fixed{d: DecisionAllow}}, DecisionDeny, "no", ""},
		{"allow despite earlier error", []Authorizer{fixed{d: DecisionNoOpinion, err: boom}, fixed{d: DecisionAllow}}, DecisionAllow, "", ""},
		{"no opinion joins", []Authorizer{fixed{d: DecisionNoOpinion, reason: "a", err: boom}, fixed{d: DecisionNoOpinion}, fixed{d: DecisionNoOpinion, reason: "c"}},
			DecisionNoOpinion, "a\nc", "boom"},
		{"named prefixes no opinion", []Authorizer{Named("rbac", fixed{d: DecisionNoOpinion, reason: "RBAC: x"})}, DecisionNoOpinion, "rbac: RBAC: x", ""},
		{"named keeps allow", []Authorizer{Named("rbac", fixed{d: DecisionAllow, reason: "RBAC: allowed"})}, DecisionAllow, "RBAC: allowed", ""},
		{"always deny", []Authorizer{Named("alwaysdeny", AlwaysDeny{})}, DecisionNoOpinion, "alwaysdeny: Everything is forbidden.", ""},
	} {
		d, reason, err := Union(tc.chain...).Authorize(ctx, Attributes{})
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if d != tc.want || reason != tc.wantReason || gotErr != tc.wantErr {
			t.Errorf("%s: %v %q %q; want %v %q %q", tc.name, d, reason, gotErr, tc.want, tc.wantReason, tc.wantErr)
		}
	}
	r1, r2 := ResourceRule{Verbs: []string{"get"}}, ResourceRule{Verbs: []string{"list"}}
	res, _, incomplete, err := Union(fixed{rules: []ResourceRule{r1}}, fixed{rules: []ResourceRule{r2}, err: boom}).RulesFor(ctx, User{}, "ns")
	if !reflect.DeepEqual(res, []ResourceRule{r1, r2}) || !incomplete || err == nil || err.Error() != "boom" {
		t.Errorf("RulesFor = %v %v %v", res, incomplete, err)
	}
}

// TestPrivilegedGroups: members are allowed, others have no opinion.
func TestPrivilegedGroups(t *testing.T) {
	p := PrivilegedGroups(SystemMasters)
	if d, _, _ := p.Authorize(context.Background(), Attributes{User: User{Name: "x", Groups: []string{"a", SystemMasters}}}); d != DecisionAllow {
		t.Errorf("member: %v", d)
	}
	if d, _, _ := p.Authorize(context.Background(), Attributes{User: User{Name: SystemMasters}}); d != DecisionNoOpinion {
		t.Errorf("non-member: %v", d)
	}
}
