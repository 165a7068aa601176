package authorization_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// TestReviewsUnderRBAC checks the reviews answered by the RBAC authorizer
// as kube-apiserver answers them: allowed with the binding as reason,
// refused without reason, the missing role of a binding as reason (and no
// evaluationError), and the rules a service account holds in a namespace.
func TestReviewsUnderRBAC(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	must := func(path, body string) {
		t.Helper()
		if code, b, _ := s.Do(t, "POST", path, "application/json", strings.NewReader(body)); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, code, b)
		}
	}
	const rbac = "/apis/rbac.authorization.k8s.io/v1"
	must(rbac+"/clusterroles", `{"metadata":{"name":"pod-reader"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz/*"]}]}`)
	must(rbac+"/namespaces/default/rolebindings", `{"metadata":{"name":"readers"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"pod-reader"},"subjects":[{"kind":"ServiceAccount","name":"alice"}]}`)
	must(rbac+"/namespaces/default/rolebindings", `{"metadata":{"name":"dangling"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"nonexistent"},"subjects":[{"kind":"User","name":"bob"}]}`)

	sar := func(user, verb, ns string) authorizationv1.SubjectAccessReviewStatus {
		body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"` + user +
			`","groups":["system:authenticated"],"resourceAttributes":{"verb":"` + verb + `","resource":"pods","namespace":"` + ns + `"}}}`
		var out authorizationv1.SubjectAccessReview
		code, b, _ := s.Do(t, "POST", sars, "application/json", strings.NewReader(body))
		if code != http.StatusCreated || json.Unmarshal(b, &out) != nil {
			t.Fatalf("SubjectAccessReview: %d %s", code, b)
		}
		return out.Status
	}
	const aliceUser = "system:serviceaccount:default:alice"
	allowed := authorizationv1.SubjectAccessReviewStatus{Allowed: true,
		Reason: `RBAC: allowed by RoleBinding "readers/default" of ClusterRole "pod-reader" to ServiceAccount "alice/default"`}
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, "alice list pods", func() error {
		if st := sar(aliceUser, "list", "default"); st != allowed {
			return fmt.Errorf("%+v", st)
		}
		return nil
	})
	for _, c := range []struct {
		user, verb, ns string
		want           authorizationv1.SubjectAccessReviewStatus
	}{
		{aliceUser, "delete", "default", authorizationv1.SubjectAccessReviewStatus{}},
		{aliceUser, "list", "kube-system", authorizationv1.SubjectAccessReviewStatus{}},
		{"bob", "list", "default", authorizationv1.SubjectAccessReviewStatus{Reason: `rbac: RBAC: clusterrole.rbac.authorization.k8s.io "nonexistent" not found`}},
	} {
		if st := sar(c.user, c.verb, c.ns); st != c.want {
			t.Errorf("%s %s pods in %s: %+v, want %+v", c.user, c.verb, c.ns, st, c.want)
		}
	}

	// What kube-apiserver's default role system:basic-user grants.
	must(rbac+"/clusterroles", `{"metadata":{"name":"basic"},"rules":[{"verbs":["create"],"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectrulesreviews","selfsubjectaccessreviews"]}]}`)
	must(rbac+"/clusterrolebindings", `{"metadata":{"name":"basic"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"basic"},"subjects":[{"kind":"Group","name":"system:authenticated","apiGroup":"rbac.authorization.k8s.io"}]}`)
	alice := s.As(s.ServiceAccountToken(t, "default", "alice"))
	var rr authorizationv1.SelfSubjectRulesReview
	testwait.UntilEvery(t, 10*time.Second, 20*time.Millisecond, "SelfSubjectRulesReview", func() error {
		code, b, _ := alice.Do(t, "POST", ssrrs, "application/json",
			strings.NewReader(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}`))
		if code != http.StatusCreated {
			return fmt.Errorf("%d %s", code, b)
		}
		if err := json.Unmarshal(b, &rr); err != nil {
			t.Fatal(err)
		}
		return nil
	})
	// The default roles, when present, add rules; these must be there.
	st := rr.Status
	for _, want := range []authorizationv1.ResourceRule{
		{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectrulesreviews", "selfsubjectaccessreviews"}},
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}},
	} {
		if !slices.ContainsFunc(st.ResourceRules, func(r authorizationv1.ResourceRule) bool { return reflect.DeepEqual(r, want) }) {
			t.Errorf("rules of alice in default lack %+v: %+v", want, st)
		}
	}
	wantURL := authorizationv1.NonResourceRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/*"}}
	if !slices.ContainsFunc(st.NonResourceRules, func(r authorizationv1.NonResourceRule) bool { return reflect.DeepEqual(r, wantURL) }) ||
		st.Incomplete || st.EvaluationError != "" {
		t.Errorf("rules of alice in default: %+v", st)
	}
	for _, r := range st.ResourceRules {
		if slices.Contains(r.Resources, "pods") && slices.Contains(r.Verbs, "delete") {
			t.Errorf("alice holds more than bound: %+v", r)
		}
	}
}
