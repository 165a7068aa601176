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
	"github.com/setpoint-dev/setpoint/internal/registry/registrytest/apitest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const (
	base  = "/apis/authorization.k8s.io/v1"
	sars  = base + "/subjectaccessreviews"
	ssars = base + "/selfsubjectaccessreviews"
	lsars = base + "/namespaces/default/localsubjectaccessreviews"
	ssrrs = base + "/selfsubjectrulesreviews"
)

func invalid(msg string, causes ...string) apitest.Refusal {
	return apitest.Refusal{Code: 422, Reason: metav1.StatusReasonInvalid, Message: `.authorization.k8s.io "" is invalid: ` + msg, Causes: causes}
}

const labelKey = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`

// TestRefusals sends kube-apiserver v1.37.2's invalid reviews and checks
// its answers, taken from it.
func TestRefusals(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "empty spec", Method: "POST", Path: sars, Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{}}`,
			Want: invalid(`[spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]`,
				"spec:FieldValueInvalid", "spec.user:FieldValueInvalid")},
		{Name: "both attributes", Method: "POST", Path: sars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}}`,
			Want: invalid(`spec: Invalid value: {"Path":"/x","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`, "spec:FieldValueInvalid")},
		{Name: "metadata", Method: "POST", Path: sars + "?fieldManager=curl",
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{"name":"x"},"spec":{"user":"u","resourceAttributes":{"verb":"get"}}}`,
			Want: invalid(`metadata: Invalid value: {"name":"x","managedFields":[{"manager":"curl","operation":"Update","apiVersion":"authorization.k8s.io/v1","time":…`, "metadata:FieldValueInvalid")},
		{Name: "selectors", Method: "POST", Path: sars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{"requirements":[{"key":"","operator":"In","values":["a"]},{"key":"a","operator":"Exists","values":["x"]},{"key":"a","operator":"Foo"}]},"labelSelector":{"requirements":[{"key":"a b","operator":"In"},{"key":"a","operator":"Exists","values":["x"]}]}}}}`,
			Want: invalid("[spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified, spec.resourceAttributes.fieldSelector.requirements[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist', spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn', spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: \"a b\": "+labelKey+", spec.resourceAttributes.labelSelector.requirements[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist']",
				"spec.resourceAttributes.fieldSelector.requirements[0].key:FieldValueRequired", "spec.resourceAttributes.fieldSelector.requirements[1].values:FieldValueForbidden",
				"spec.resourceAttributes.labelSelector.requirements[0].values:FieldValueRequired", "spec.resourceAttributes.labelSelector.requirements[0].key:FieldValueInvalid",
				"spec.resourceAttributes.labelSelector.requirements[1].values:FieldValueForbidden")},
		{Name: "selector raw and requirements", Method: "POST", Path: sars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"list","resource":"pods","fieldSelector":{},"labelSelector":{"rawSelector":"a=b","requirements":[{"key":"a","operator":"In"}]}}}}`,
			Want: invalid("[spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required, spec.resourceAttributes.labelSelector.rawSelector: Invalid value: \"a=b\": may not specified at the same time as requirements, spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn']",
				"spec.resourceAttributes.fieldSelector.requirements:FieldValueRequired", "spec.resourceAttributes.labelSelector.rawSelector:FieldValueInvalid",
				"spec.resourceAttributes.labelSelector.requirements[0].values:FieldValueRequired")},
		{Name: "self, empty spec", Method: "POST", Path: ssars, Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{}}`,
			Want: invalid(`spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`, "spec:FieldValueInvalid")},
		{Name: "local, other namespace in spec", Method: "POST", Path: lsars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"get","namespace":"other"}}}`,
			Want: invalid(`spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`, "spec.resourceAttributes.namespace:FieldValueInvalid")},
		{Name: "local, non-resource", Method: "POST", Path: lsars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"default"},"spec":{"user":"u","nonResourceAttributes":{"path":"/x","verb":"get"}}}`,
			Want: invalid(`spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":"get"}: disallowed on this kind of request`, "spec.nonResourceAttributes:FieldValueInvalid")},
		{Name: "local, other namespace in metadata", Method: "POST", Path: lsars,
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"other"},"spec":{"user":"u","resourceAttributes":{"verb":"get","namespace":"other"}}}`,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "the namespace of the provided object does not match the namespace sent on the request"}},
		{Name: "rules without namespace", Method: "POST", Path: ssrrs, Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}`,
			Want: apitest.Refusal{Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "no namespace on request"}},
		{Name: "namespaced path of a cluster review", Method: "POST", Path: base + "/namespaces/default/subjectaccessreviews",
			Body: `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"u","resourceAttributes":{"verb":"get"}}}`,
			Want: apitest.Refusal{Code: 404, Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}},
	})
}

// TestAlwaysAllow checks the answers under setpoint's authorization
// today, those of kube-apiserver --authorization-mode=AlwaysAllow.
func TestAlwaysAllow(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true}
	var sar authorizationv1.SubjectAccessReview
	apitest.Must(t, s, http.MethodPost, sars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"nobody","resourceAttributes":{"verb":"delete","resource":"secrets","namespace":"kube-system"}}}`, 201, &sar)
	if sar.Status != allowed || sar.Spec.User != "nobody" || len(sar.ManagedFields) != 1 {
		t.Errorf("SubjectAccessReview: %+v", sar)
	}
	var lsar authorizationv1.LocalSubjectAccessReview
	apitest.Must(t, s, http.MethodPost, lsars, `{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","spec":{"groups":["g"],"resourceAttributes":{"verb":"get","namespace":"default"}}}`, 201, &lsar)
	if lsar.Status != allowed || lsar.Namespace != "default" {
		t.Errorf("LocalSubjectAccessReview: %+v", lsar)
	}
	var ssar authorizationv1.SelfSubjectAccessReview
	apitest.Must(t, s, http.MethodPost, ssars+"?dryRun=All", `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`, 201, &ssar)
	if ssar.Status != allowed {
		t.Errorf("SelfSubjectAccessReview: %+v", ssar)
	}
	var rr authorizationv1.SelfSubjectRulesReview
	apitest.Must(t, s, http.MethodPost, ssrrs, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","metadata":{"name":"x"},"spec":{"namespace":"default"}}`, 201, &rr)
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

// recorder decides by a table and records what it was asked; it stands for
// the RBAC authorizer, which does not exist yet.
type recorder struct {
	asked chan authorizer.Attributes
}

func (r recorder) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
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
	s := testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) { c.Authorizer = rec }})
	var sar authorizationv1.SubjectAccessReview
	apitest.Must(t, s, http.MethodPost, sars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","uid":"u1","groups":["g"],"extra":{"k":["v"]},"resourceAttributes":{"verb":"get","group":"apps","version":"v1","resource":"deployments","subresource":"scale","name":"web","namespace":"prod"}}}`, 201, &sar)
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
	apitest.Must(t, s, http.MethodPost, ssars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`, 201, &ssar)
	if want := (authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "nobody else", EvaluationError: "partial evaluation"}); ssar.Status != want {
		t.Errorf("admin: %+v", ssar.Status)
	}
	if got := <-rec.asked; got.User.Name != "setpoint-admin" || got.Path != "/metrics" || got.Verb != "get" || got.ResourceRequest {
		t.Errorf("self review asked %+v", got)
	}
	var rr authorizationv1.SelfSubjectRulesReview
	apitest.Must(t, s, http.MethodPost, ssrrs, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"prod"}}`, 201, &rr)
	if st := rr.Status; !st.Incomplete || st.EvaluationError != "some rules are not listable" || len(st.NonResourceRules) != 0 ||
		len(st.ResourceRules) != 1 || st.ResourceRules[0].ResourceNames[0] != "setpoint-admin@prod" {
		t.Errorf("rules review: %+v", rr.Status)
	}
}

// TestSelectorParseErrors: selectors that do not parse are noted in
// status.evaluationError, worded as kube-apiserver words them.
func TestSelectorParseErrors(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
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
		apitest.Must(t, s, http.MethodPost, ssars, `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"pods",`+c.selectors+`}}}`, 201, &ssar)
		if ssar.Status.EvaluationError != c.want || !ssar.Status.Allowed {
			t.Errorf("%s: status %+v, want evaluationError %q", c.selectors, ssar.Status, c.want)
		}
	}
}
