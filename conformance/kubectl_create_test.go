package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// createDir holds what kube-apiserver v1.37.2 answers to each generator
// (testdata/kubectl/create/<name>.json, normalized by normalizeCreated),
// and the key pair `kubectl create secret tls` reads.
var createDir = filepath.Join("testdata", "kubectl", "create")

// createGenerators are kubectl create's generators: golden file name and
// the arguments after "create" (the namespace kr-create is added; flags
// go before "--").
var createGenerators = []struct {
	name string
	args []string
}{
	{"namespace", []string{"namespace", "kr-create-ns"}},
	{"job", []string{"job", "job", "--image=busybox:1.36", "--", "echo", "hi"}},
	{"cronjob", []string{"cronjob", "cronjob", "--image=busybox:1.36", "--schedule=*/1 * * * *", "--restart=OnFailure", "--", "echo", "hi"}},
	{"role", []string{"role", "role", "--verb=get,list,watch", "--resource=pods,configmaps,deployments.apps", "--resource-name=x"}},
	{"rolebinding", []string{"rolebinding", "rolebinding", "--role=role", "--user=alice", "--group=devs", "--serviceaccount=kr-create:sa"}},
	{"clusterrole", []string{"clusterrole", "clusterrole", "--verb=get", "--resource=nodes"}},
	{"clusterrole-nonresource", []string{"clusterrole", "clusterrole-nonresource", "--verb=get", "--non-resource-url=/healthz"}},
	{"clusterrole-aggregated", []string{"clusterrole", "clusterrole-aggregated", "--aggregation-rule=kr.example.com/aggregate=true"}},
	{"clusterrolebinding", []string{"clusterrolebinding", "clusterrolebinding", "--clusterrole=view", "--user=alice", "--group=devs"}},
	{"serviceaccount", []string{"serviceaccount", "serviceaccount"}},
	{"quota", []string{"quota", "quota", "--hard=pods=10,requests.cpu=2,limits.memory=4Gi", "--scopes=NotBestEffort"}},
	{"priorityclass", []string{"priorityclass", "priorityclass", "--value=1000", "--description=d", "--preemption-policy=Never"}},
	{"poddisruptionbudget", []string{"poddisruptionbudget", "poddisruptionbudget", "--selector=app=x", "--min-available=50%"}},
	{"ingress", []string{"ingress", "ingress", "--class=default", "--rule=foo.example.com/bar=svc:80,tls=tls-secret", "--rule=foo.example.com/baz*=svc2:http", "--annotation=a=b"}},
	{"secret-tls", []string{"secret", "tls", "tls", "--cert=" + filepath.Join(createDir, "tls.crt"), "--key=" + filepath.Join(createDir, "tls.key")}},
	{"secret-generic", []string{"secret", "generic", "generic", "--from-literal=a=b", "--from-literal=c=d", "--type=example.com/x"}},
	{"secret-docker-registry", []string{"secret", "docker-registry", "docker", "--docker-username=u", "--docker-password=p", "--docker-server=r.example.com", "--docker-email=u@example.com"}},
	{"configmap", []string{"configmap", "configmap", "--from-literal=a=b"}},
	{"deployment", []string{"deployment", "deployment", "--image=nginx:1.27", "--replicas=2", "--port=80"}},
	{"service-clusterip", []string{"service", "clusterip", "service-clusterip", "--tcp=80:8080", "--clusterip=None"}},
	{"service-nodeport", []string{"service", "nodeport", "service-nodeport", "--tcp=80:8080", "--node-port=30080"}},
	{"service-externalname", []string{"service", "externalname", "service-externalname", "--external-name=example.com"}},
	{"service-loadbalancer", []string{"service", "loadbalancer", "service-loadbalancer", "--tcp=443:8443"}},
}

// createArgs places the namespace and output flags before any "--".
func createArgs(args []string, extra ...string) []string {
	i := slices.Index(args, "--")
	if i < 0 {
		i = len(args)
	}
	out := append([]string{"create"}, args[:i]...)
	out = append(out, append([]string{"-n", "kr-create", "-o", "json"}, extra...)...)
	return append(out, args[i:]...)
}

// normalizeCreated drops what differs from one creation to the next: the
// uid (also where labels and selectors repeat it), resourceVersion,
// creationTimestamp, managedFields times, allocated cluster IPs and the
// node ports a LoadBalancer service is given.
func normalizeCreated(t *testing.T, out string) map[string]any {
	t.Helper()
	var o map[string]any
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	md := o["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
		delete(md, k)
	}
	mf, _ := md["managedFields"].([]any)
	for _, m := range mf {
		delete(m.(map[string]any), "time")
	}
	if spec, ok := o["spec"].(map[string]any); ok && o["kind"] == "Service" && spec["clusterIP"] != "None" {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
		if spec["type"] == "LoadBalancer" {
			for _, p := range spec["ports"].([]any) {
				delete(p.(map[string]any), "nodePort")
			}
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if uid != "" {
		b = []byte(strings.ReplaceAll(string(b), uid, "<uid>"))
	}
	var n map[string]any
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKubectlCreateGenerators: every kubectl create generator makes the
// object kube-apiserver v1.37.2 makes of it, defaults included
// (compared with testdata/kubectl/create). With
// CONFORMANCE_REFERENCE_KUBECONFIG set, the test instead writes those
// files from that cluster (--dry-run=server).
func TestKubectlCreateGenerators(t *testing.T) {
	if kc := os.Getenv("CONFORMANCE_REFERENCE_KUBECONFIG"); kc != "" {
		writeCreateGoldens(t, kc)
		return
	}
	env := startSetpoint(t, testenv.Options{})
	kubectl(t, env, "", "create", "namespace", "kr-create")
	for _, g := range createGenerators {
		t.Run(g.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(createDir, g.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got := kubectl(t, env, "", createArgs(g.args)...)
			checkNodePorts(t, got)
			if w, g := normalizeCreated(t, string(want)), normalizeCreated(t, got); !reflect.DeepEqual(g, w) {
				gb, _ := json.MarshalIndent(g, "", "  ")
				wb, _ := json.MarshalIndent(w, "", "  ")
				t.Errorf("created:\n%s\nkube-apiserver v1.37.2 creates:\n%s", gb, wb)
			}
		})
	}
}

// checkNodePorts: a NodePort or LoadBalancer service setpoint creates has
// a node port of the default range on every port (kube-apiserver's dry-run
// allocator, whose answer is the golden, gives a placeholder, 32769).
func checkNodePorts(t *testing.T, out string) {
	t.Helper()
	var svc corev1.Service
	if err := json.Unmarshal([]byte(out), &svc); err != nil || svc.Kind != "Service" {
		return
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort < 30000 || p.NodePort > 32767 {
			t.Errorf("port %s: node port %d, not of the range 30000-32767", p.Name, p.NodePort)
		}
	}
}

// writeCreateGoldens runs the generators against kubeconfig's cluster
// with --dry-run=server and writes their answers.
func writeCreateGoldens(t *testing.T, kubeconfig string) {
	env := &testenv.Environment{Kubeconfig: kubeconfig}
	if r := kubectlRun(t, env, "", "create", "namespace", "kr-create"); r.Err != nil && !strings.Contains(r.Stderr, "AlreadyExists") {
		t.Fatal(r.Stderr)
	}
	defer kubectl(t, env, "", "delete", "namespace", "kr-create", "--wait=false")
	for _, g := range createGenerators {
		out := kubectl(t, env, "", createArgs(g.args, "--dry-run=server")...)
		if err := os.WriteFile(filepath.Join(createDir, g.name+".json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d answers of %s to %s", len(createGenerators), kubeconfig, createDir)
}

// TestKubectlCreateToken: kubectl create token issues a service account
// token (--duration, --audience) that a TokenReview authenticates as the
// account; a missing account is refused.
func TestKubectlCreateToken(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	kubectl(t, env, "", "create", "namespace", "kr-token")
	kubectl(t, env, "", "create", "serviceaccount", "robot", "-n", "kr-token")
	token := strings.TrimSpace(kubectl(t, env, "", "create", "token", "robot", "-n", "kr-token", "--duration=2h"))
	review, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !review.Status.Authenticated || review.Status.User.Username != "system:serviceaccount:kr-token:robot" {
		t.Errorf("review of the token: %+v", review.Status)
	}
	claims := jwtClaims(t, token)
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 7200 {
		t.Errorf("token lifetime %v s, want 7200 (--duration=2h)", exp-iat)
	}
	token = strings.TrimSpace(kubectl(t, env, "", "create", "token", "robot", "-n", "kr-token", "--audience=https://kr.example.com"))
	if aud := jwtClaims(t, token)["aud"]; !reflect.DeepEqual(aud, []any{"https://kr.example.com"}) {
		t.Errorf("audience %v", aud)
	}
	r := krFails(t, env, "", "create", "token", "nobody", "-n", "kr-token")
	if r.Stderr != "error: failed to create token: serviceaccounts \"nobody\" not found\n" {
		t.Errorf("token of a missing account: %q", r.Stderr)
	}
	r = krFails(t, env, "", "create", "token", "robot", "-n", "kr-token", "--duration=1m")
	if !strings.Contains(r.Stderr, "may not specify a duration less than 10 minutes") {
		t.Errorf("a token for a minute: %q", r.Stderr)
	}
}

// jwtClaims decodes a JWT's claims (without checking its signature: the
// TokenReview does that).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := jsonBase64(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestKubectlAuth: kubectl auth whoami shows the kubeconfig's user;
// kubectl auth can-i answers yes to everything, as kube-apiserver does
// under --authorization-mode=AlwaysAllow (setpoint's authorizer today).
func TestKubectlAuth(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	out := kubectl(t, env, "", "auth", "whoami")
	if out != "ATTRIBUTE   VALUE\nUsername    setpoint-admin\nUID         setpoint-admin\nGroups      [system:masters system:authenticated]\n" {
		t.Errorf("auth whoami:\n%s", out)
	}
	var review authenticationv1.SelfSubjectReview
	krJSON(t, env, &review, "auth", "whoami", "-o", "json")
	if review.Kind != "SelfSubjectReview" || review.Status.UserInfo.Username != "setpoint-admin" {
		t.Errorf("auth whoami -o json: %+v", review)
	}
	for _, args := range [][]string{
		{"create", "pods"}, {"delete", "deployments.apps", "-n", "kube-system"}, {"*", "*"}, {"get", "/healthz"},
		{"create", "certificatesigningrequests/approval"}, {"list", "secrets", "--all-namespaces"}, {"update", "pods", "--subresource=status"},
	} {
		if out := kubectl(t, env, "", append([]string{"auth", "can-i"}, args...)...); out != "yes\n" {
			t.Errorf("auth can-i %v: %q", args, out)
		}
	}
	// Under RBAC the admin holds cluster-admin (system:masters) and what
	// every authenticated user holds (system:basic-user, system:discovery,
	// system:public-info-viewer), as on kube-apiserver.
	out = kubectl(t, env, "", "auth", "can-i", "--list", "-n", "default")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fields := func(i int) string {
		if i >= len(lines) {
			return ""
		}
		return strings.Join(strings.Fields(lines[i]), " ")
	}
	if fields(0) != "Resources Non-Resource URLs Resource Names Verbs" || fields(1) != "*.* [] [] [*]" || fields(2) != "[*] [] [*]" {
		t.Errorf("auth can-i --list does not start with cluster-admin's rules:\n%s", out)
	}
	for _, want := range []string{"selfsubjectreviews.authentication.k8s.io [] [] [create]",
		"selfsubjectaccessreviews.authorization.k8s.io [] [] [create]", "[/healthz] [] [get]", "[/version] [] [get]"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Join(strings.Fields(l), " ") == want }) {
			t.Errorf("auth can-i --list lacks %q:\n%s", want, out)
		}
	}
}

// TestKubectlCertificateApprove: kubectl certificate approve and deny
// write the Approved or Denied condition kubectl sets, through the
// approval subresource; a decided request cannot be decided otherwise.
func TestKubectlCertificateApprove(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	ctx := context.Background()
	for _, n := range []string{"kr-csr-a", "kr-csr-b"} {
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: crudCSR, SignerName: "example.com/kr-signer",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
		if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct{ args, out string }{
		{"approve kr-csr-a", "certificatesigningrequest.certificates.k8s.io/kr-csr-a approved\n"},
		{"approve kr-csr-a", "certificatesigningrequest.certificates.k8s.io/kr-csr-a approved\n"},
		{"deny kr-csr-b", "certificatesigningrequest.certificates.k8s.io/kr-csr-b denied\n"},
	} {
		if out := kubectl(t, env, "", append([]string{"certificate"}, strings.Fields(step.args)...)...); out != step.out {
			t.Errorf("certificate %s: %q", step.args, out)
		}
	}
	for _, step := range []struct{ args, stderr string }{
		{"deny kr-csr-a", "error: certificate signing request \"kr-csr-a\" is already Approved\n"},
		{"approve kr-csr-b", "error: certificate signing request \"kr-csr-b\" is already Denied\n"},
		{"approve kr-csr-b --force", "error: certificate signing request \"kr-csr-b\" is already Denied\n"},
	} {
		if r := krFails(t, env, "", append([]string{"certificate"}, strings.Fields(step.args)...)...); r.Stderr != step.stderr {
			t.Errorf("certificate %s: %q", step.args, r.Stderr)
		}
	}
	a, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, "kr-csr-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Status.Conditions; len(c) != 1 || c[0].Type != certificatesv1.CertificateApproved || c[0].Status != corev1.ConditionTrue ||
		c[0].Reason != "KubectlApprove" || c[0].Message != "This CSR was approved by kubectl certificate approve." {
		t.Errorf("kr-csr-a conditions: %+v", c)
	}
	h, rows := krTable(kubectl(t, env, "", "get", "csr"))
	if !slices.Equal(h, []string{"NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"}) || len(rows) != 2 ||
		!slices.Equal(slices.Delete(rows[0], 1, 2), []string{"kr-csr-a", "example.com/kr-signer", "setpoint-admin", "<none>", "Approved"}) ||
		!slices.Equal(slices.Delete(rows[1], 1, 2), []string{"kr-csr-b", "example.com/kr-signer", "setpoint-admin", "<none>", "Denied"}) {
		t.Errorf("get csr: %q %q", h, rows)
	}
}

// jsonBase64 decodes a JWT segment (base64url without padding).
func jsonBase64(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
