package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKubectlRBAC: a ServiceAccount's token (kubectl create token) is
// refused what no binding grants, with kube-apiserver's words, until a
// Role and RoleBinding made with kubectl grant it.
func TestKubectlRBAC(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), "bolt")
	// kubectl reads discovery first: what kube-apiserver's default role
	// system:discovery grants every authenticated user.
	s.kubectl(t, "", "create", "clusterrole", "discovery-reader", "--verb=get",
		"--non-resource-url=/api", "--non-resource-url=/api/*", "--non-resource-url=/apis", "--non-resource-url=/apis/*")
	s.kubectl(t, "", "create", "clusterrolebinding", "discovery-reader", "--clusterrole=discovery-reader", "--group=system:authenticated")
	s.kubectl(t, "", "create", "serviceaccount", "robot")
	token := strings.TrimSpace(s.kubectl(t, "", "create", "token", "robot"))
	want := `Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:robot" cannot list resource "pods" in API group "" in the namespace "default"`
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		// The discovery binding takes effect a moment after it is written.
		_, errOut, err := s.kubectlErr(t, "", "--token", token, "get", "pods")
		if err != nil && strings.TrimSpace(errOut) == want {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("get pods without a binding: %v\n%s\nwant %s", err, errOut, want)
		}
	}
	s.kubectl(t, "", "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
	s.kubectl(t, "", "create", "rolebinding", "robot-reads", "--role=pod-reader", "--serviceaccount=default:robot")
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, errOut, err := s.kubectlErr(t, "", "--token", token, "get", "pods")
		if err == nil {
			if !strings.Contains(errOut+out, "No resources found") {
				t.Errorf("get pods once bound: %s%s", out, errOut)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get pods once bound: %v %s", err, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Escalation: the robot may not grant itself more.
	_, errOut, err := s.kubectlErr(t, "", "--token", token, "create", "role", "more", "--verb=delete", "--resource=pods")
	if err == nil || !strings.Contains(errOut, `roles.rbac.authorization.k8s.io is forbidden: User "system:serviceaccount:default:robot" cannot create resource "roles"`) {
		t.Errorf("create role without rights: %v %s", err, errOut)
	}
}
