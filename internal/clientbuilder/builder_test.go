package clientbuilder

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

func whoami(t *testing.T, ctx context.Context, c *rest.Client) string {
	t.Helper()
	res := rest.For[*authenticationv1.SelfSubjectReview, *metav1.List](c,
		authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"), false)
	out, err := res.Create(ctx, &authenticationv1.SelfSubjectReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return out.Status.UserInfo.Username
}

// TestServiceAccountClient: a configuration of the builder creates its
// ServiceAccount on first use, authenticates as it, keeps its token until
// 80% of its lifetime has passed, then renews it; a 401 drops the token.
func TestServiceAccountClient(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root, err := rest.ConfigFromKubeconfig(srv.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	root.QPS = -1 // not paced by the client default of 5 requests per second
	clk := clocktesting.NewFakeClock(time.Now())
	b, err := New(root, Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := b.Config("job-controller")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "" || cfg.UserAgent == root.UserAgent {
		t.Fatalf("config keeps the root's token or user agent: %q %q", cfg.BearerToken, cfg.UserAgent)
	}
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if got := whoami(t, ctx, c); got != "system:serviceaccount:kube-system:job-controller" {
		t.Fatalf("user %q", got)
	}
	admin, err := rest.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.CloseIdleConnections()
	sas := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](admin, saGVR, true).Namespace("kube-system")
	if _, err := sas.Get(ctx, "job-controller", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ServiceAccount was not created: %v", err)
	}

	src := b.source("job-controller")
	first := src.tok
	whoami(t, ctx, c)
	if src.tok != first {
		t.Fatal("token renewed before it was due")
	}
	// An hour's token is renewed once 48 minutes have passed.
	clk.Step(47 * time.Minute)
	whoami(t, ctx, c)
	if src.tok != first {
		t.Fatal("token renewed at 47 minutes")
	}
	clk.Step(2 * time.Minute)
	whoami(t, ctx, c)
	if src.tok == first || src.tok == "" {
		t.Fatal("token not renewed at 49 minutes")
	}

	// A token the server refuses is dropped; the next request gets another.
	second := src.tok
	src.mu.Lock()
	src.tok = "forged"
	src.mu.Unlock()
	if _, err := sas.Get(ctx, "job-controller", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	res := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c, saGVR, true).Namespace("kube-system")
	_, err = res.Get(ctx, "job-controller", metav1.GetOptions{})
	if err == nil {
		t.Fatal("a forged token was accepted")
	}
	if src.tok != "" {
		t.Fatalf("the refused token was kept")
	}
	if got := whoami(t, ctx, c); got != "system:serviceaccount:kube-system:job-controller" || src.tok == second {
		t.Fatalf("after a 401: user %q, token renewed %v", got, src.tok != second)
	}
}
