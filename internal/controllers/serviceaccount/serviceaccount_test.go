package serviceaccount_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/serviceaccount"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDefaultServiceAccount: every namespace, old and new, gets "default";
// a deleted one comes back; the controller never rewrites one a user
// changed.
func TestDefaultServiceAccount(t *testing.T) {
	env := ctrltest.Start(t, func(e *ctrltest.Env) error { return serviceaccount.Add(e.Mgr, serviceaccount.Options{}) })
	ctx := context.Background()
	sas := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](env.Client,
		corev1.SchemeGroupVersion.WithResource("serviceaccounts"), true)
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](env.Client, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	has := func(ns string) func() error {
		return func() error {
			_, err := sas.Namespace(ns).Get(ctx, "default", metav1.GetOptions{})
			return err
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		env.Eventually("default account in "+ns, has(ns))
	}
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("default account in team-a", has("team-a"))

	// A user's change stays.
	sa, err := sas.Namespace("team-a").Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sa.Secrets) != 0 || len(sa.ImagePullSecrets) != 0 || len(sa.Labels) != 0 {
		t.Fatalf("default account is not bare: %+v", sa)
	}
	sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
	if _, err := sas.Namespace("team-a").Update(ctx, sa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Deleted: recreated, with a new UID.
	if err := sas.Namespace("team-a").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("default account recreated", func() error {
		cur, err := sas.Namespace("team-a").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID == sa.UID {
			return fmt.Errorf("still the old account")
		}
		if len(cur.ImagePullSecrets) != 0 {
			return fmt.Errorf("recreated with the old content: %+v", cur)
		}
		return nil
	})

	// Only "default" is ensured.
	list, err := sas.Namespace("team-a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d accounts in team-a, want 1", len(list.Items))
	}
}
