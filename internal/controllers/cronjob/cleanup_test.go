package cronjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// testCleanupRetried: a finished Job beyond the history limit whose
// deletion is refused (here by a ValidatingAdmissionPolicy) is deleted by
// a later, backed-off sync once deletions are allowed again — not only at
// the next schedule time, which may be an hour away.
func testCleanupRetried(t *testing.T, srv *testserver.Server) {
	h := newHarness(t, srv)
	ns := h.ns
	unhold := holdJobDeletions(t, srv, ns)

	c := newCronJob("keep0", "* * * * *")
	c.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	cj := h.create(c)
	m := h.toNextMinute()
	name := jobName(cj, m)
	h.finish(name, true)
	h.waitEvent("keep0", "FailedDelete", "")
	unhold()
	h.eventually("finished job deleted after the refusal", func() error {
		h.clk.Step(time.Second) // the retry's back-off runs on the fake clock
		for _, j := range h.jobsOf(cj) {
			if j.Name == name {
				return fmt.Errorf("job %s still there", name)
			}
		}
		return nil
	})
	if !h.nextMinute().Equal(m.Add(time.Minute)) {
		t.Fatalf("the deletion waited for the next schedule time (clock at %v)", h.clk.Now())
	}
	h.waitEvent("keep0", "SuccessfulDelete", "Deleted job "+name)
}

// holdJobDeletions makes the server refuse deletions of Jobs in ns (a
// ValidatingAdmissionPolicy and its binding) until the returned function
// removes the binding; both wait until the server applies the change (a
// dry-run deletion of a probe Job tells).
func holdJobDeletions(t *testing.T, srv *testserver.Server, ns string) func() {
	t.Helper()
	ctx := context.Background()
	c := srv.RESTClient(t)
	arGV := admissionregistrationv1.SchemeGroupVersion
	policies := rest.For[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyList](
		c, arGV.WithResource("validatingadmissionpolicies"), false)
	bindings := rest.For[*admissionregistrationv1.ValidatingAdmissionPolicyBinding, *admissionregistrationv1.ValidatingAdmissionPolicyBindingList](
		c, arGV.WithResource("validatingadmissionpolicybindings"), false)
	name := "hold-job-deletions-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "deletions held by the test"}},
		}}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}}
	if _, err := policies.Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = policies.Delete(ctx, name, metav1.DeleteOptions{}) })
	if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobs := rest.For[*batchv1.Job, *batchv1.JobList](c, jobGVR, true).Namespace(ns)
	probe := newCronJob("probe", "* * * * *").Spec.JobTemplate
	if _, err := jobs.Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: probe.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	held := func() error {
		err := jobs.Delete(ctx, "probe", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "deletions held by the test") {
			return nil
		}
		return fmt.Errorf("a dry-run deletion answered %v", err)
	}
	testwait.Until(t, 20*time.Second, "deletions held", held)
	return func() {
		if err := bindings.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 20*time.Second, "deletions allowed again", func() error {
			if held() == nil {
				return errors.New("still held")
			}
			return nil
		})
	}
}
