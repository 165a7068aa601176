package authorizer

import (
	"context"
	"reflect"
	"testing"
)

// TestAlwaysAllow pins what kube-apiserver's AlwaysAllow authorizer
// answers: allow with no reason, and one rule of each kind granting "*".
func TestAlwaysAllow(t *testing.T) {
	var a Authorizer = AlwaysAllow{}
	for _, attrs := range []Attributes{
		{User: User{Name: "nobody"}, Verb: "delete", ResourceRequest: true, Resource: "secrets", Namespace: "kube-system"},
		{Verb: "get", Path: "/metrics"},
	} {
		d, reason, err := a.Authorize(context.Background(), attrs)
		if d != DecisionAllow || reason != "" || err != nil {
			t.Errorf("Authorize(%+v) = %v, %q, %v; want allow, no reason", attrs, d, reason, err)
		}
	}
	res, nonRes, incomplete, err := a.RulesFor(context.Background(), User{Name: "nobody"}, "default")
	wantRes := []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}
	wantNonRes := []NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
	if !reflect.DeepEqual(res, wantRes) || !reflect.DeepEqual(nonRes, wantNonRes) || incomplete || err != nil {
		t.Errorf("RulesFor = %+v, %+v, %v, %v", res, nonRes, incomplete, err)
	}
}
