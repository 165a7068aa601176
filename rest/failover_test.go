package rest_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestFailoverBetweenServers starts two API servers sharing credentials
// (one --pki-dir): the kubeconfig the second writes names both, and a
// client loaded from it keeps working after the server it uses stops,
// including for a POST (the stopped server refuses the connection, so
// nothing was sent).
func TestFailoverBetweenServers(t *testing.T) {
	pkiDir := t.TempDir()
	a := testserver.Start(t, testserver.Options{PKIDir: pkiDir})
	b := testserver.Start(t, testserver.Options{PKIDir: pkiDir})
	if a.Token != b.Token {
		t.Fatal("servers sharing a PKI dir have different admin tokens")
	}
	cfg, err := rest.ConfigFromKubeconfig(b.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != b.URL || len(cfg.Hosts) != 1 || cfg.Hosts[0] != a.URL {
		t.Fatalf("kubeconfig of b: Host %s Hosts %v, want %s then [%s]", cfg.Host, cfg.Hosts, b.URL, a.URL)
	}
	// The other context of the same kubeconfig reaches a alone (kubectl
	// --context), with the same CA and token.
	ctxA, err := rest.ConfigFromKubeconfig(b.Kubeconfig, "setpoint-"+a.URL[len("https://"):])
	if err != nil || ctxA.Host != a.URL || ctxA.BearerToken != cfg.BearerToken {
		t.Fatalf("context for a: %+v, %v", ctxA, err)
	}
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).Namespace("default")
	ctx := context.Background()
	create := func(name string) {
		t.Helper()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s through %s: %v", name, c.Host(), err)
		}
	}
	create("on-b")
	if c.Host() != b.URL {
		t.Fatalf("client uses %s before any failure, want %s", c.Host(), b.URL)
	}
	b.Stop(t)
	for i := range 3 {
		create(fmt.Sprintf("on-a-%d", i))
	}
	if c.Host() != a.URL {
		t.Fatalf("client uses %s after b stopped, want %s", c.Host(), a.URL)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Memory storage: each server has its own data, so a holds only what
	// was written after the failover.
	if len(list.Items) != 3 {
		t.Fatalf("a lists %d configmaps, want 3", len(list.Items))
	}
}
