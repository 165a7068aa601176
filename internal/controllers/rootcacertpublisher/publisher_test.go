package rootcacertpublisher_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllers/ctrltest"
	"github.com/setpoint-dev/setpoint/internal/controllers/rootcacertpublisher"
	"github.com/setpoint-dev/setpoint/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAddNeedsRootCA(t *testing.T) {
	if err := rootcacertpublisher.Add(nil, rootcacertpublisher.Options{}); err == nil {
		t.Fatal("Add without a root CA succeeded")
	}
}

// TestPublish: every namespace gets kube-root-ca.crt with the CA that
// verifies the API server; edits of its data and description are undone,
// other metadata stays; a deleted one is recreated.
func TestPublish(t *testing.T) {
	var ca []byte
	env := ctrltest.Start(t, func(e *ctrltest.Env) error {
		ca = e.ClusterCA()
		return rootcacertpublisher.Add(e.Mgr, rootcacertpublisher.Options{RootCA: ca})
	})
	ctx := context.Background()
	cms := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](env.Client, corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	nss := rest.For[*corev1.Namespace, *corev1.NamespaceList](env.Client, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	published := func(ns string) func() error {
		return func() error {
			cm, err := cms.Namespace(ns).Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(cm.Data) != 1 || cm.Data["ca.crt"] != string(ca) {
				return fmt.Errorf("data %v", cm.Data)
			}
			if cm.Annotations["kubernetes.io/description"] != rootcacertpublisher.Description {
				return fmt.Errorf("annotations %v", cm.Annotations)
			}
			return nil
		}
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		env.Eventually("published in "+ns, published(ns))
	}
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("published in team-b", published("team-b"))

	// Edited data and a removed description are reset; a label stays.
	cm, err := cms.Namespace("team-b").Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"ca.crt": "forged", "extra": "x"}
	cm.Annotations = nil
	cm.Labels = map[string]string{"mine": "yes"}
	if _, err := cms.Namespace("team-b").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("reset after an edit", func() error {
		if err := published("team-b")(); err != nil {
			return err
		}
		cur, err := cms.Namespace("team-b").Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Labels["mine"] != "yes" {
			return fmt.Errorf("label lost: %v", cur.Labels)
		}
		return nil
	})

	old, err := cms.Namespace("team-b").Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Namespace("team-b").Delete(ctx, rootcacertpublisher.ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Eventually("recreated", func() error {
		cur, err := cms.Namespace("team-b").Get(ctx, rootcacertpublisher.ConfigMapName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID == old.UID {
			return fmt.Errorf("not yet deleted")
		}
		return published("team-b")()
	})
}
