package authz

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/testenv"
)

// identity is one user of the matrix, on both sides.
type identity struct {
	name string
	// ref and sp send its requests; header adds impersonation.
	ref, sp *difftest.Side
	header  map[string]string
}

// env is what the tests share.
var env struct {
	ref, sp    *difftest.Side // admins
	identities []identity
}

const (
	nsA = "authz-a" // editor and admin are bound here
	nsB = "authz-b" // the group is bound to view here
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("authz: skipped in -short mode (starts the reference kube-apiserver)")
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	ref, err := refcluster.Start(ctx, refcluster.Options{ControllerManager: true, EtcdArgs: []string{"--unsafe-no-fsync"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "authz: starting the reference:", err)
		return 1
	}
	defer ref.Stop() //nolint:errcheck // best effort at exit
	sp, err := testenv.Start(testenv.Options{Controllers: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "authz: starting setpoint:", err)
		return 1
	}
	defer sp.Stop() //nolint:errcheck // best effort at exit
	if env.ref, err = difftest.SideFromKubeconfig("reference", ref.Kubeconfig()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env.sp, err = difftest.SideFromKubeconfig("setpoint", sp.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "authz: setup:", err)
		return 1
	}
	fmt.Printf("authz: both clusters ready and set up in %v\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// fixtures are created on both sides by the admin, in order.
var fixtures = []struct{ path, body string }{
	{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"authz-a"}}`},
	{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"authz-b"}}`},
	{"/api/v1/namespaces/authz-a/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared"},"data":{"k":"v"}}`},
	{"/api/v1/namespaces/authz-b/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared"},"data":{"k":"v"}}`},
	{"/api/v1/namespaces/authz-b/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"k":"v"}}`},
	{"/api/v1/namespaces/authz-a/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"nobody"}}`},
	{"/api/v1/namespaces/authz-a/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"viewer"}}`},
	{"/api/v1/namespaces/authz-a/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"editor"}}`},
	{"/api/v1/namespaces/authz-a/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"nsadmin"}}`},
	{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"authz-viewer"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
		"subjects":[{"kind":"ServiceAccount","name":"viewer","namespace":"authz-a"}]}`},
	{"/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"editor"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
		"subjects":[{"kind":"ServiceAccount","name":"editor","namespace":"authz-a"}]}`},
	{"/apis/rbac.authorization.k8s.io/v1/namespaces/authz-a/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"nsadmin"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"},
		"subjects":[{"kind":"ServiceAccount","name":"nsadmin","namespace":"authz-a"}]}`},
	{"/apis/rbac.authorization.k8s.io/v1/namespaces/authz-b/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"team"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":"authz-team"}]}`},
	{"/apis/rbac.authorization.k8s.io/v1/namespaces/authz-b/roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"one-secret"},
		"rules":[{"apiGroups":[""],"resources":["secrets"],"resourceNames":["creds"],"verbs":["get"]}]}`},
	{"/apis/rbac.authorization.k8s.io/v1/namespaces/authz-b/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"bob-secret"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"one-secret"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"bob"}]}`},
}

// setup creates the fixtures on both sides, waits until the aggregated
// view role carries its rules on both, and builds the identities.
func setup(ctx context.Context) error {
	for _, s := range []*difftest.Side{env.ref, env.sp} {
		for _, f := range fixtures {
			resp, err := s.Do(ctx, difftest.Request{Method: "POST", Path: f.path, Body: []byte(f.body)})
			if err != nil {
				return err
			}
			if resp.Code != 201 {
				return fmt.Errorf("%s: POST %s: %d %s", s.Name, f.path, resp.Code, resp.Body)
			}
		}
	}
	env.identities = []identity{{name: "admin", ref: env.ref, sp: env.sp}}
	for _, sa := range []string{"nobody", "viewer", "editor", "nsadmin"} {
		id := identity{name: "sa-" + sa}
		var err error
		if id.ref, err = saSide(ctx, env.ref, nsA, sa); err != nil {
			return err
		}
		if id.sp, err = saSide(ctx, env.sp, nsA, sa); err != nil {
			return err
		}
		env.identities = append(env.identities, id)
	}
	impersonated := []identity{
		{name: "node", header: map[string]string{"Impersonate-User": "system:node:n1", "Impersonate-Group": "system:nodes"}},
		{name: "user-alice", header: map[string]string{"Impersonate-User": "alice"}},
		{name: "group-team", header: map[string]string{"Impersonate-User": "carol", "Impersonate-Group": "authz-team"}},
		{name: "user-bob", header: map[string]string{"Impersonate-User": "bob"}},
	}
	for _, id := range impersonated {
		id.ref, id.sp = env.ref, env.sp
		env.identities = append(env.identities, id)
	}
	// The view role is aggregated by each side's controller manager.
	viewer := env.identities[2]
	for _, s := range []*difftest.Side{viewer.ref, viewer.sp} {
		if err := waitAllowed(ctx, s, nil, map[string]any{"namespace": nsB, "verb": "list", "resource": "pods"}); err != nil {
			return err
		}
	}
	return nil
}

// saSide asks for a token of the ServiceAccount and returns a Side that
// authenticates with it.
func saSide(ctx context.Context, admin *difftest.Side, ns, name string) (*difftest.Side, error) {
	path := fmt.Sprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, name)
	resp, err := admin.Do(ctx, difftest.Request{Method: "POST", Path: path,
		Body: []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)})
	if err != nil {
		return nil, err
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if resp.Code != 201 || json.Unmarshal(resp.Body, &tr) != nil || tr.Status.Token == "" {
		return nil, fmt.Errorf("%s: token of %s/%s: %d %s", admin.Name, ns, name, resp.Code, resp.Body)
	}
	return admin.WithToken(fmt.Sprintf("system:serviceaccount:%s:%s", ns, name), tr.Status.Token), nil
}

// waitAllowed polls a SelfSubjectAccessReview until it is allowed (60 s).
func waitAllowed(ctx context.Context, s *difftest.Side, header map[string]string, attrs map[string]any) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		rev, err := review(ctx, s, header, attrs)
		if err != nil {
			return err
		}
		if rev.Allowed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %v is still not allowed after 60 s", s.Name, attrs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
