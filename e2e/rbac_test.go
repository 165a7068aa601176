package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testwait"
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
	// The discovery binding takes effect a moment after it is written.
	testwait.UntilEvery(t, 20*time.Second, 100*time.Millisecond, "get pods without a binding", func() error {
		_, errOut, err := s.kubectlErr(t, "", "--token", token, "get", "pods")
		if err != nil && strings.TrimSpace(errOut) == want {
			return nil
		}
		return fmt.Errorf("%v\n%s\nwant %s", err, errOut, want)
	})
	s.kubectl(t, "", "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
	s.kubectl(t, "", "create", "rolebinding", "robot-reads", "--role=pod-reader", "--serviceaccount=default:robot")
	var out, errOut string
	testwait.UntilEvery(t, 20*time.Second, 100*time.Millisecond, "get pods once bound", func() error {
		var err error
		out, errOut, err = s.kubectlErr(t, "", "--token", token, "get", "pods")
		if err != nil {
			return fmt.Errorf("%v %s", err, errOut)
		}
		return nil
	})
	if !strings.Contains(errOut+out, "No resources found") {
		t.Errorf("get pods once bound: %s%s", out, errOut)
	}
	// Escalation: the robot may not grant itself more.
	_, errOut, err := s.kubectlErr(t, "", "--token", token, "create", "role", "more", "--verb=delete", "--resource=pods")
	if err == nil || !strings.Contains(errOut, `roles.rbac.authorization.k8s.io is forbidden: User "system:serviceaccount:default:robot" cannot create resource "roles"`) {
		t.Errorf("create role without rights: %v %s", err, errOut)
	}
}
