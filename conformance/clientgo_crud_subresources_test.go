package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
)

// The action subresources of the CRUD rows: each client does them with
// its own calls (the typed clientset's Bind, CreateToken, UpdateApproval,
// EvictV1, UpdateEphemeralContainers; the dynamic client's create or update
// of the subresource).

// subresourceActions are a client's calls for the action subresources.
type subresourceActions struct {
	bind            func(ctx context.Context, b *corev1.Binding) error
	createToken     func(ctx context.Context, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	updateApproval  func(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, error)
	evict           func(ctx context.Context, e *policyv1.Eviction) error
	updateEphemeral func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
}

// subresourceFlows exercise one subresource of a row's object obj-a.
var subresourceFlows = map[string]func(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps){
	"scale":               scaleFlow,
	"binding":             bindingFlow,
	"token":               tokenFlow,
	"approval":            approvalFlow,
	"eviction":            evictionFlow,
	"ephemeralcontainers": ephemeralContainersFlow,
}

// scaleFlow reads and writes spec.replicas through the scale subresource.
func scaleFlow(t *testing.T, ctx context.Context, _ crudEnv, c crudCase, ops crudOps) {
	a := c.objName("obj-a")
	s, err := ops.getScale(ctx, a)
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if s.Spec.Replicas != 1 || s.Name != a || s.Status.Selector != "app="+a {
		t.Fatalf("scale: %+v", s)
	}
	s.Spec.Replicas = 3
	s2, err := ops.updateScale(ctx, a, s)
	if err != nil {
		t.Fatalf("update scale: %v", err)
	}
	if s2.Spec.Replicas != 3 {
		t.Fatalf("update scale returned %+v", s2)
	}
	o, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if r := replicasOf(o); r != 3 {
		t.Fatalf("spec.replicas after scale: %d", r)
	}
	s.ResourceVersion = "1"
	if _, err := ops.updateScale(ctx, a, s); !apierrors.IsConflict(err) {
		t.Fatalf("stale scale update: want Conflict, got %v", err)
	}
}

// bindingFlow binds a pod to a node through pods/binding; a bound pod is
// then deleted gracefully.
func bindingFlow(t *testing.T, ctx context.Context, _ crudEnv, c crudCase, ops crudOps) {
	if _, err := ops.create(ctx, c.newObj("obj-bound", nil)); err != nil {
		t.Fatal(err)
	}
	err := ops.actions.bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "obj-bound", Namespace: crudNamespace},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-x"},
	})
	if err != nil {
		t.Fatalf("bind: %v", err)
	}
	o, err := ops.get(ctx, "obj-bound")
	if err != nil || o.(*corev1.Pod).Spec.NodeName != "node-x" {
		t.Fatalf("after binding: %v %v", o, err)
	}
	err = ops.actions.bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "obj-bound", Namespace: crudNamespace},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-y"},
	})
	if !apierrors.IsConflict(err) {
		t.Fatalf("binding a bound pod: want Conflict, got %v", err)
	}
	// a bound pod is deleted gracefully: it stays with a deletionTimestamp
	if err := ops.delete(ctx, "obj-bound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err = ops.get(ctx, "obj-bound")
	if err != nil {
		t.Fatalf("a bound pod vanished at once on a graceful delete: %v", err)
	}
	if p := o.(*corev1.Pod); p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
		t.Fatalf("graceful delete: deletionTimestamp %v grace %v", p.DeletionTimestamp, p.DeletionGracePeriodSeconds)
	}
	forceDeletePod(t, ctx, ops, "obj-bound")
}

func forceDeletePod(t *testing.T, ctx context.Context, ops crudOps, name string) {
	t.Helper()
	zero := int64(0)
	if err := ops.delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.get(ctx, name); !apierrors.IsNotFound(err) {
		t.Fatalf("after delete with grace 0: %v", err)
	}
}

// tokenFlow asks for a token of the service account obj-a, which a
// TokenReview then authenticates as the service account.
func tokenFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	a := c.objName("obj-a")
	sa, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ops.actions.createToken(ctx, a, &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: a},
		Spec:       authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	})
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	if tr.Status.Token == "" || time.Until(tr.Status.ExpirationTimestamp.Time) < 59*time.Minute || time.Until(tr.Status.ExpirationTimestamp.Time) > 61*time.Minute {
		t.Fatalf("token request status: token %d bytes, expires %v", len(tr.Status.Token), tr.Status.ExpirationTimestamp)
	}
	review, err := env.cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := review.Status.User
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:" + crudNamespace, "system:authenticated"}
	if !review.Status.Authenticated || u.Username != "system:serviceaccount:"+crudNamespace+":"+a ||
		u.UID != string(sa.(*corev1.ServiceAccount).UID) || !slices.Equal(u.Groups, wantGroups) {
		t.Fatalf("review of the service account's token: %+v", review.Status)
	}
	_, err = ops.actions.createToken(ctx, a, &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: a},
		Spec:       authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(60))},
	})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec.expirationSeconds") {
		t.Fatalf("a token for a minute: want 422 at spec.expirationSeconds, got %v", err)
	}
	_, err = ops.actions.createToken(ctx, c.objName("missing"), &authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: c.objName("missing")}})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a token of a missing service account: want NotFound, got %v", err)
	}
}

// hasCause tells whether an API error names field among its causes.
func hasCause(err error, field string) bool {
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		return false
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// approvalFlow approves the CSR obj-a through its approval subresource;
// denying it afterwards is refused.
func approvalFlow(t *testing.T, ctx context.Context, _ crudEnv, c crudCase, ops crudOps) {
	a := c.objName("obj-a")
	o, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	csr := o.(*certificatesv1.CertificateSigningRequest)
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ApprovedByTest", Message: "approved by client-go",
	})
	out, err := ops.actions.updateApproval(ctx, csr)
	if err != nil {
		t.Fatalf("update approval: %v", err)
	}
	if !csrHas(out, certificatesv1.CertificateApproved) {
		t.Fatalf("approval answered conditions %+v", out.Status.Conditions)
	}
	o, err = ops.get(ctx, a)
	if err != nil || !csrHas(o.(*certificatesv1.CertificateSigningRequest), certificatesv1.CertificateApproved) {
		t.Fatalf("approval not persisted: %v", err)
	}
	deny := o.(*certificatesv1.CertificateSigningRequest)
	deny.Status.Conditions = append(deny.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "DeniedByTest",
	})
	if _, err := ops.actions.updateApproval(ctx, deny); !apierrors.IsInvalid(err) {
		t.Fatalf("denying an approved CSR: want 422, got %v", err)
	}
}

func csrHas(csr *certificatesv1.CertificateSigningRequest, typ certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// evictionFlow evicts a ready pod no disruption budget guards (it goes)
// and one a budget guards with no disruption allowed (429, the pod stays).
func evictionFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	running := func(name string) {
		t.Helper()
		pod := c.newObj(name, map[string]string{"evict": name}).(*corev1.Pod)
		pod.Labels = map[string]string{"evict": name}
		if _, err := ops.create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := env.cs.CoreV1().Pods(crudNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			_, err = env.cs.CoreV1().Pods(crudNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	eviction := func(name string) *policyv1.Eviction {
		return &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: crudNamespace}}
	}

	running("obj-evict-free")
	if err := ops.actions.evict(ctx, eviction("obj-evict-free")); err != nil {
		t.Fatalf("evict a pod without a disruption budget: %v", err)
	}
	if _, err := ops.get(ctx, "obj-evict-free"); !apierrors.IsNotFound(err) {
		t.Fatalf("the evicted pod (not on a node): want NotFound, got %v", err)
	}

	running("obj-evict-guarded")
	minAvailable := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "obj-evict-guard", Namespace: crudNamespace},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"evict": "obj-evict-guarded"}}},
	}
	pdbs := env.cs.PolicyV1().PodDisruptionBudgets(crudNamespace)
	created, err := pdbs.Create(ctx, pdb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The budget's status, as the disruption controller writes it: no
	// disruption allowed. (An unprocessed budget is a 429 with Retry-After
	// 10 s, which client-go retries.)
	created.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: created.Generation,
		CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1, DisruptionsAllowed: 0}
	if _, err := pdbs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil && !referenceMode() {
		t.Fatal(err) // (the reference's disruption controller may have written it first)
	}
	defer func() {
		if err := pdbs.Delete(ctx, pdb.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}()
	err = ops.actions.evict(ctx, eviction("obj-evict-guarded"))
	if !apierrors.IsTooManyRequests(err) || !hasCauseReason(err, policyv1.DisruptionBudgetCause) {
		t.Fatalf("evict a pod a budget guards: want 429 with a DisruptionBudget cause, got %v", err)
	}
	if _, err := ops.get(ctx, "obj-evict-guarded"); err != nil {
		t.Fatalf("the guarded pod: %v", err)
	}
	if err := ops.actions.evict(ctx, eviction("obj-evict-missing")); !apierrors.IsNotFound(err) {
		t.Fatalf("evict a missing pod: want NotFound, got %v", err)
	}
	forceDeletePod(t, ctx, ops, "obj-evict-guarded")
}

func hasCauseReason(err error, reason metav1.CauseType) bool {
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		return false
	}
	for _, c := range st.Status().Details.Causes {
		if c.Type == reason {
			return true
		}
	}
	return false
}

// ephemeralContainersFlow adds an ephemeral container to the pod obj-a;
// removing it again is refused.
func ephemeralContainersFlow(t *testing.T, ctx context.Context, _ crudEnv, c crudCase, ops crudOps) {
	a := c.objName("obj-a")
	o, err := ops.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	pod := o.(*corev1.Pod)
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Image: "busybox:1.36", Command: []string{"sh"}, Stdin: true, TTY: true,
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
		},
		TargetContainerName: "c",
	})
	out, err := ops.actions.updateEphemeral(ctx, pod)
	if err != nil {
		t.Fatalf("update ephemeral containers: %v", err)
	}
	if ec := out.Spec.EphemeralContainers; len(ec) != 1 || ec[0].Name != "debugger" || ec[0].TargetContainerName != "c" {
		t.Fatalf("ephemeral containers answered: %+v", ec)
	}
	out.Spec.EphemeralContainers = nil
	if _, err := ops.actions.updateEphemeral(ctx, out); !apierrors.IsInvalid(err) {
		t.Fatalf("removing an ephemeral container: want 422, got %v", err)
	}
	o, err = ops.get(ctx, a)
	if err != nil || len(o.(*corev1.Pod).Spec.EphemeralContainers) != 1 {
		t.Fatalf("the pod after the refused removal: %v", err)
	}
}
