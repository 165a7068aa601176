package authorization_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	base  = "/apis/authorization.k8s.io/v1"
	sars  = base + "/subjectaccessreviews"
	ssars = base + "/selfsubjectaccessreviews"
	lsars = base + "/namespaces/default/localsubjectaccessreviews"
	ssrrs = base + "/selfsubjectrulesreviews"
)

// TestAlwaysAllow checks the answers under --authorization-mode=AlwaysAllow,
// those of kube-apiserver run so.
func TestAlwaysAllow(t *testing.T) {
	s := reftest.Start(t, testserver.Options{AuthorizationModes: []string{apiserver.ModeAlwaysAllow}})
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	var sar authorizationv1.SubjectAccessReview
	s.Must(t, http.MethodPost, sars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"nobody","resourceAttributes":{"verb":"delete","resource":"secrets","namespace":"kube-system"}}}`, 201, &sar)
	if sar.Status != allowed || sar.Spec.User != "nobody" || len(sar.ManagedFields) != 1 {
		t.Errorf("SubjectAccessReview: %+v", sar)
	}
	var lsar authorizationv1.LocalSubjectAccessReview
	s.Must(t, http.MethodPost, lsars, `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","spec":{"groups":["g"],"resourceAttributes":{"verb":"get","namespace":"default"}}}`, 201, &lsar)
	if lsar.Status != allowed || lsar.Namespace != "default" {
		t.Errorf("LocalSubjectAccessReview: %+v", lsar)
	}
	var ssar authorizationv1.SelfSubjectAccessReview
	s.Must(t, http.MethodPost, ssars+"?dryRun=All", `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`, 201, &ssar)
	if ssar.Status != allowed {
		t.Errorf("SelfSubjectAccessReview: %+v", ssar)
	}
	var rr authorizationv1.SelfSubjectRulesReview
	s.Must(t, http.MethodPost, ssrrs, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","metadata":{"name":"x"},"spec":{"namespace":"default"}}`, 201, &rr)
	want := authorizationv1.SelfSubjectRulesReview{
		TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: "authorization.k8s.io/v1"},
		Status: authorizationv1.SubjectRulesReviewStatus{
			ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
			NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		},
	}
	if !reflect.DeepEqual(rr, want) {
		t.Errorf("SelfSubjectRulesReview: %+v", rr)
	}
}

// recorder decides by a table and records what it was asked about
// anything but the review requests themselves (which it allows, as the
// server's authorizer decides them too).
type recorder struct {
	asked chan authorizer.Attributes
}

func (r recorder) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.ResourceRequest && a.APIGroup == "authorization.k8s.io" {
		return authorizer.DecisionAllow, "", nil
	}
	r.asked <- a
	if a.User.Name == "alice" {
		return authorizer.DecisionAllow, "alice may", nil
	}
	return authorizer.DecisionDeny, "nobody else", errors.New("partial evaluation")
}

func (recorder) RulesFor(_ context.Context, u authorizer.User, ns string) ([]authorizer.ResourceRule, []authorizer.NonResourceRule, bool, error) {
	return []authorizer.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{u.Name + "@" + ns}}},
		nil, true, errors.New("some rules are not listable")
}

// TestAuthorizerDecides checks the reviews ask the server's authorizer
// with the attributes of their spec (or of the requesting user) and
// render its answer.
func TestAuthorizerDecides(t *testing.T) {
	rec := recorder{asked: make(chan authorizer.Attributes, 10)}
	s := reftest.Start(t, testserver.Options{Tune: func(c *apiserver.Config) { c.Authorizer = rec }})
	var sar authorizationv1.SubjectAccessReview
	s.Must(t, http.MethodPost, sars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","uid":"u1","groups":["g"],"extra":{"k":["v"]},"resourceAttributes":{"verb":"get","group":"apps","version":"v1","resource":"deployments","subresource":"scale","name":"web","namespace":"prod"}}}`, 201, &sar)
	if want := (authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "alice may"}); sar.Status != want {
		t.Errorf("alice: %+v", sar.Status)
	}
	got := <-rec.asked
	want := authorizer.Attributes{User: authorizer.User{Name: "alice", UID: "u1", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}},
		Verb: "get", ResourceRequest: true, Namespace: "prod", APIGroup: "apps", APIVersion: "v1", Resource: "deployments", Subresource: "scale", Name: "web"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("asked %+v\nwant  %+v", got, want)
	}
	var ssar authorizationv1.SelfSubjectAccessReview
	s.Must(t, http.MethodPost, ssars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`, 201, &ssar)
	if want := (authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "nobody else", EvaluationError: "partial evaluation"}); ssar.Status != want {
		t.Errorf("admin: %+v", ssar.Status)
	}
	if got := <-rec.asked; got.User.Name != "setpoint-admin" || got.Path != "/metrics" || got.Verb != "get" || got.ResourceRequest {
		t.Errorf("self review asked %+v", got)
	}
	var rr authorizationv1.SelfSubjectRulesReview
	s.Must(t, http.MethodPost, ssrrs, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"prod"}}`, 201, &rr)
	if st := rr.Status; !st.Incomplete || st.EvaluationError != "some rules are not listable" || len(st.NonResourceRules) != 0 ||
		len(st.ResourceRules) != 1 || st.ResourceRules[0].ResourceNames[0] != "setpoint-admin@prod" {
		t.Errorf("rules review: %+v", rr.Status)
	}
}

// TestSelectorParseErrors: selectors that do not parse are noted in
// status.evaluationError, worded as kube-apiserver words them.
func TestSelectorParseErrors(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	for _, c := range []struct{ selectors, want string }{
		{`"fieldSelector":{"requirements":[{"key":"a","operator":"Near"}]}`, "spec.resourceAttributes.fieldSelector ignored due to parse error"},
		{`"fieldSelector":{"requirements":[{"key":"a","operator":"In","values":["b"]},{"key":"c","operator":"Exists"}]}`, "spec.resourceAttributes.fieldSelector partially ignored due to parse error"},
		{`"labelSelector":{"requirements":[{"key":"a","operator":"Near"}]}`, "spec.resourceAttributes.labelSelector ignored due to parse error"},
		{`"labelSelector":{"rawSelector":"a in (b"},"fieldSelector":{"rawSelector":"a==b"}`, "spec.resourceAttributes.labelSelector ignored due to parse error"},
		{`"fieldSelector":{"requirements":[{"key":"a","operator":"NotIn","values":["b","c"]}]},"labelSelector":{"requirements":[{"key":"a","operator":"Exists"},{"key":"b","operator":"Near"}]}`,
			"spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector partially ignored due to parse error"},
		{`"labelSelector":{"requirements":[{"key":"a","operator":"Exists"}]}`, ""},
	} {
		var ssar authorizationv1.SelfSubjectAccessReview
		s.Must(t, http.MethodPost, ssars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"pods",`+c.selectors+`}}}`, 201, &ssar)
		if ssar.Status.EvaluationError != c.want || !ssar.Status.Allowed {
			t.Errorf("%s: status %+v, want evaluationError %q", c.selectors, ssar.Status, c.want)
		}
	}
}
