package cluster

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controlplane"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/rest"
)

var (
	selfReviewsGVR = authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews")
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
	saGVR          = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// whoami asks the API server who c is (SelfSubjectReview).
func whoami(t *testing.T, ctx context.Context, c *rest.Client) authenticationv1.UserInfo {
	t.Helper()
	res := rest.For[*authenticationv1.SelfSubjectReview, *metav1.List](c, selfReviewsGVR, false)
	out, err := res.Create(ctx, &authenticationv1.SelfSubjectReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "SelfSubjectReview"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview: %v", err)
	}
	return out.Status.UserInfo
}

func clientOf(t *testing.T, cfg *rest.Config) *rest.Client {
	t.Helper()
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestComponentIdentities: in a cluster as `setpoint up` runs it, the
// controller manager is system:kube-controller-manager, each controller its
// own ServiceAccount of kube-system (created by the controller manager,
// with a token from the TokenRequest API), the scheduler
// system:kube-scheduler and each node system:node:<name> in system:nodes;
// under those identities a Deployment's pods are created, scheduled and run.
func TestComponentIdentities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Options{
		APIServer: controlplane.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Storage: "memory"},
		Nodes:     2,
		// (the ServiceAccount admission needs each namespace's default
		// ServiceAccount, and the pods' token volume kube-root-ca.crt)
		ControllerManager: controllermanager.ControllerManagerOptions{Controllers: []string{
			controllermanager.ReplicaSet, controllermanager.Deployment,
			controllermanager.ServiceAccount, controllermanager.RootCAPublisher}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if err := c.WaitReady(ctx, nil); err != nil {
		t.Fatal(err)
	}
	admin := clientOf(t, c.Config)

	cm, err := c.componentConfig("controller-manager.conf")
	if err != nil {
		t.Fatal(err)
	}
	if u := whoami(t, ctx, clientOf(t, cm)); u.Username != "system:kube-controller-manager" {
		t.Errorf("controller manager is %+v", u)
	}
	sched, err := c.componentConfig("scheduler.conf")
	if err != nil {
		t.Fatal(err)
	}
	if u := whoami(t, ctx, clientOf(t, sched)); u.Username != "system:kube-scheduler" {
		t.Errorf("scheduler is %+v", u)
	}
	ca, err := pki.EnsureCA(filepath.Dir(c.API.KubeconfigPath()))
	if err != nil {
		t.Fatal(err)
	}
	nodeCfg, err := NodeCredentials(c.Config, ca)("node-1")
	if err != nil {
		t.Fatal(err)
	}
	if u := whoami(t, ctx, clientOf(t, nodeCfg)); u.Username != "system:node:node-1" || !slices.Contains(u.Groups, "system:nodes") {
		t.Errorf("node-1 is %+v", u)
	}
	rsClient, err := c.ControllerManager.ClientFor("replicaset-controller")
	if err != nil {
		t.Fatal(err)
	}
	u := whoami(t, ctx, rsClient)
	if u.Username != "system:serviceaccount:kube-system:replicaset-controller" ||
		!slices.Contains(u.Groups, "system:serviceaccounts:kube-system") {
		t.Errorf("replicaset controller is %+v", u)
	}

	// The workload converges under those identities.
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](admin, deploymentsGVR, true).Namespace("default")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	if _, err := deploys.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		got, err := deploys.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.AvailableReplicas == 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("deployment not available: %+v", got.Status)
		case <-time.After(100 * time.Millisecond):
		}
	}
	sas := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](admin, saGVR, true).Namespace("kube-system")
	for _, name := range []string{"replicaset-controller", "deployment-controller"} {
		if _, err := sas.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ServiceAccount kube-system/%s: %v", name, err)
		}
	}
}

// The components of the process ask for uncompressed responses (their
// streaming lists would be gzip otherwise); the admin configuration the
// cluster was given is left as it is.
func TestInProcessConfigsUncompressed(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "t"}
	local := inProcess(base)
	if !local.DisableCompression || local.Host != base.Host || local.BearerToken != "t" {
		t.Errorf("in-process config %+v", local)
	}
	if base.DisableCompression {
		t.Error("inProcess changed its argument")
	}
}
