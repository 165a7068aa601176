package conformance

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestClientGoReachesSetpoint: client-go loads setpoint's kubeconfig,
// trusts its CA, authenticates and reads discovery and namespaces.
func TestClientGoReachesSetpoint(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	cs := clientset(t, env)
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion == "" {
		t.Fatalf("server version: %v %v", v, err)
	}
	ns, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns.Items) < 4 {
		t.Fatalf("want default, kube-system, kube-public, kube-node-lease; got %d namespaces", len(ns.Items))
	}
}
