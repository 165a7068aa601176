package conformance

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestHelm installs the chart `helm create` makes with Helm 3 (built from
// helm.sh/helm/v3, tools/helm) on a setpoint cluster with controllers and
// nodes, waiting for its Deployment, then upgrades it, rolls it back and
// uninstalls it, checking the cluster after each step.
func TestHelm(t *testing.T) {
	helmBin := toolBinary(t, "helm", "helm.sh/helm/v3/cmd/helm", "helm")
	env := startSetpoint(t, testenv.Options{Nodes: 2})
	cs := clientset(t, env)
	dir := t.TempDir()
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helmBin, append(args, "--kubeconfig", env.Kubeconfig)...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "HELM_CACHE_HOME=" + filepath.Join(dir, "cache"),
			"HELM_CONFIG_HOME=" + filepath.Join(dir, "config"), "HELM_DATA_HOME=" + filepath.Join(dir, "data")}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	replicas := func() (want, ready int32) {
		t.Helper()
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "demo-mychart", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("deployment demo-mychart: %v", err)
		}
		return *d.Spec.Replicas, d.Status.ReadyReplicas
	}

	helm("create", "mychart")
	helm("install", "demo", "./mychart", "--namespace", "default", "--wait", "--timeout", "2m")
	if want, ready := replicas(); want != 1 || ready != 1 {
		t.Fatalf("after install: %d/%d replicas ready, want 1/1", ready, want)
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "demo-mychart", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's ServiceAccount: %v", err)
	}
	if _, err := cs.CoreV1().Services("default").Get(ctx, "demo-mychart", metav1.GetOptions{}); err != nil {
		t.Fatalf("the chart's Service: %v", err)
	}

	helm("upgrade", "demo", "./mychart", "--namespace", "default", "--set", "replicaCount=3", "--wait", "--timeout", "2m")
	if want, ready := replicas(); want != 3 || ready != 3 {
		t.Fatalf("after upgrade: %d/%d replicas ready, want 3/3", ready, want)
	}
	helm("rollback", "demo", "1", "--namespace", "default", "--wait", "--timeout", "2m")
	if want, ready := replicas(); want != 1 || ready != 1 {
		t.Fatalf("after rollback: %d/%d replicas ready, want 1/1", ready, want)
	}
	history := helm("history", "demo", "--namespace", "default")
	for _, rev := range []string{"Install complete", "Upgrade complete", "Rollback to 1"} {
		if !strings.Contains(history, rev) {
			t.Errorf("helm history lacks %q:\n%s", rev, history)
		}
	}
	if out := helm("list", "--namespace", "default"); !strings.Contains(out, "deployed") || !strings.Contains(out, "demo") {
		t.Errorf("helm list:\n%s", out)
	}

	helm("uninstall", "demo", "--namespace", "default", "--wait", "--timeout", "2m")
	if _, err := cs.AppsV1().Deployments("default").Get(ctx, "demo-mychart", metav1.GetOptions{}); err == nil {
		t.Error("the Deployment is still there after uninstall")
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "demo-mychart", metav1.GetOptions{}); err == nil {
		t.Error("the ServiceAccount is still there after uninstall")
	}
	secrets, err := cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=demo"})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("helm's release secrets after uninstall: %d (%v)", len(secrets.Items), err)
	}
}
