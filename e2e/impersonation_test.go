package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubectlImpersonation runs the real kubectl against the real setpoint
// binary: `kubectl auth whoami` as the admin and with --as/--as-group, and
// a ServiceAccount's token refused impersonation with kube-apiserver's
// message (recorded from v1.37.2) until a ClusterRole grants the
// impersonate verb.
func TestKubectlImpersonation(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "data"), "bolt")
	// What kube-apiserver's system:basic-user grants every authenticated
	// user, under this test's own names.
	s.kubectl(t, "", "create", "clusterrole", "e2e-whoami", "--verb=create", "--resource=selfsubjectreviews.authentication.k8s.io")
	s.kubectl(t, "", "create", "clusterrolebinding", "e2e-whoami", "--clusterrole=e2e-whoami", "--group=system:authenticated")
	whoami := func(args ...string) (name string, groups []string) {
		t.Helper()
		out := s.kubectl(t, "", append([]string{"auth", "whoami", "-o", "json"}, args...)...)
		var r struct {
			Status struct {
				UserInfo struct {
					Username string
					Groups   []string
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("whoami %v: %v\n%s", args, err, out)
		}
		return r.Status.UserInfo.Username, r.Status.UserInfo.Groups
	}
	if name, _ := whoami(); name != "setpoint-admin" {
		t.Errorf("admin is %q", name)
	}
	if name, groups := whoami("--as", "bob"); name != "bob" || strings.Join(groups, ",") != "system:authenticated" {
		t.Errorf("--as bob: %q %v", name, groups)
	}
	if name, groups := whoami("--as", "bob", "--as-group", "devs", "--as-group", "ops"); name != "bob" ||
		strings.Join(groups, ",") != "devs,ops,system:authenticated" {
		t.Errorf("--as bob --as-group devs,ops: %q %v", name, groups)
	}
	if name, groups := whoami("--as", "system:serviceaccount:team:builder"); name != "system:serviceaccount:team:builder" ||
		strings.Join(groups, ",") != "system:serviceaccounts,system:serviceaccounts:team,system:authenticated" {
		t.Errorf("--as a service account: %q %v", name, groups)
	}

	// A ServiceAccount may not impersonate until granted.
	s.kubectl(t, "", "create", "serviceaccount", "alice")
	token := strings.TrimSpace(s.kubectl(t, "", "create", "token", "alice"))
	_, errOut, err := s.kubectlErr(t, "", "--token", token, "get", "pods", "--as", "bob")
	want := `Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:alice" ` +
		`cannot impersonate-on:user-info:list resource "pods" in API group "" in the namespace "default"`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("unauthorized impersonation: %v\n%s\nwant\n%s", err, errOut, want)
	}
	s.kubectl(t, "", "create", "clusterrole", "impersonate-users", "--verb=impersonate", "--resource=users")
	s.kubectl(t, "", "create", "clusterrolebinding", "alice-impersonates", "--clusterrole=impersonate-users", "--serviceaccount=default:alice")
	deadline := 0
	for {
		out, errOut, err := s.kubectlErr(t, "", "--token", token, "auth", "whoami", "--as", "bob", "-o", "jsonpath={.status.userInfo.username}")
		if err == nil && out == "bob" {
			break
		}
		if deadline++; deadline > 50 {
			t.Fatalf("granted impersonation: %v %s %s", err, out, errOut)
		}
	}
	_, errOut, err = s.kubectlErr(t, "", "--token", token, "get", "pods", "--as", "bob", "--as-group", "devs")
	want = `Error from server (Forbidden): groups "devs" is forbidden: User "system:serviceaccount:default:alice" cannot impersonate resource "groups" in API group "" at the cluster scope`
	if err == nil || strings.TrimSpace(errOut) != want {
		t.Errorf("group not granted: %v\n%s\nwant\n%s", err, errOut, want)
	}
}
