package controllermanager_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/authorizer/node"
	"github.com/setpoint-dev/setpoint/internal/cluster"
	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"
	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestComponentsWithinKubePolicy runs the controller manager (every
// controller as its ServiceAccount), the scheduler and two nodes under
// their own identities through a workload touching most controllers, and
// checks each request they send against kube-apiserver's default
// authorization: the Node authorizer, then RBAC with the default policy.
// A request kube would refuse fails the test, naming identity, verb and
// resource: our components must need nothing kube's roles do not grant.
// The nodes read as well as write as themselves (their pods, their Node,
// the ConfigMaps, Secrets and ServiceAccounts their pods use); the node
// agent's manager, whose client is the admin's, must send nothing.
func TestComponentsWithinKubePolicy(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admin := clientFor(t, srv.Kubeconfig)
	au := &auditor{policy: loadPolicy(t, ctx, admin), denied: map[string]bool{}}
	graph := node.NewGraph()
	graphCtx, stopGraph := context.WithCancel(ctx)
	graphDone := make(chan struct{})
	go func() { defer close(graphDone); graph.Run(graphCtx, srv.API.NodeGraphSource(), nil) }()
	defer func() { stopGraph(); <-graphDone }()
	au.node = node.New(graph)

	cmCfg, schedCfg, adminCfg, nodeCreds := componentConfigs(t, srv)
	cmCfg.WrapTransport = au.wrap(authorizer.User{Name: pki.ControllerManagerUser, Groups: []string{"system:authenticated"}})
	schedCfg.WrapTransport = au.wrap(authorizer.User{Name: pki.SchedulerUser, Groups: []string{"system:authenticated"}})
	audited := func(name string) (*rest.Config, error) {
		cfg, err := nodeCreds(name)
		if err != nil {
			return nil, err
		}
		cfg.WrapTransport = au.wrap(authorizer.User{Name: pki.NodeUser(name), Groups: []string{pki.NodesGroup, "system:authenticated"}})
		return cfg, nil
	}

	election := controllermanager.Election{Identity: "perm"}
	cm, err := controllermanager.NewControllerManager(controllermanager.ControllerManagerOptions{
		Common:                       controllermanager.Common{Config: cmCfg, Logger: testLogger(), Election: election},
		UseServiceAccountCredentials: true,
		Provisioner:                  provisioner.Options{NoDefaultClass: true}, // the installer's (cluster)
	})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := controllermanager.NewScheduler(controllermanager.SchedulerOptions{
		Common: controllermanager.Common{Config: schedCfg, Logger: testLogger(), Election: election}})
	if err != nil {
		t.Fatal(err)
	}
	nodesAdmin := *adminCfg
	nodesAdmin.WrapTransport = au.forbid("the node agent's manager (admin)")
	nodesOpts := controllermanager.NodesOptions{Common: controllermanager.Common{Config: &nodesAdmin, Logger: testLogger()}}
	nodesOpts.Agent.Count = 2
	nodesOpts.Agent.NodeCredentials = audited
	nodes, err := controllermanager.NewNodes(nodesOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer runManagers(t, cm, sched, nodes)()

	defer func() {
		for _, r := range au.refusals() {
			t.Errorf("kube's default authorization refuses %s", r)
		}
	}()
	runWorkload(t, ctx, admin)
}

func clientFor(t *testing.T, kubeconfig string) *rest.Client {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // not paced by the client default of 5 requests per second
	c, err := rest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// componentConfigs are the clients of a cluster's components on srv: the
// controller manager's and the scheduler's (their kubeconfigs), the
// admin's, and the nodes' credentials (each node's own certificate).
func componentConfigs(t *testing.T, srv *testserver.Server) (cm, sched, admin *rest.Config, nodeCreds func(string) (*rest.Config, error)) {
	t.Helper()
	cm = componentConfig(t, srv.DataDir, pki.ControllerManagerKubeconfig)
	sched = componentConfig(t, srv.DataDir, pki.SchedulerKubeconfig)
	admin, err := rest.ConfigFromKubeconfig(srv.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCA(srv.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return cm, sched, admin, cluster.NodeCredentials(admin, ca)
}

func componentConfig(t *testing.T, dir, file string) *rest.Config {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(filepath.Join(dir, file), "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // not paced by the client default of 5 requests per second
	return cfg
}

// runWorkload drives the controllers: a Deployment and its scale-down, a
// Service with endpoints, a Job, a StatefulSet, a DaemonSet, a quota and a
// disruption budget whose status is counted, and a namespace deleted with
// its objects, waiting for each to converge.
func runWorkload(t *testing.T, ctx context.Context, c *rest.Client) {
	t.Helper()
	labels := map[string]string{"app": "w"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
	nsRes := rest.For[*corev1.Namespace, *corev1.NamespaceList](c, nsGVR, false)
	if _, err := nsRes.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rest.For[*corev1.ConfigMap, *corev1.ConfigMapList](c, corev1.SchemeGroupVersion.WithResource("configmaps"), true).
		Namespace("work").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rest.For[*corev1.Secret, *corev1.SecretList](c, corev1.SchemeGroupVersion.WithResource("secrets"), true).
		Namespace("work").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](c, deployGVR, true).Namespace("work")
	if _, err := deploys.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: withDependencies(tmpl)}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svcs := rest.For[*corev1.Service, *corev1.ServiceList](c, corev1.SchemeGroupVersion.WithResource("services"), true).Namespace("work")
	if _, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jobs := rest.For[*batchv1.Job, *batchv1.JobList](c, batchv1.SchemeGroupVersion.WithResource("jobs"), true).Namespace("work")
	jobTmpl := *tmpl.DeepCopy()
	jobTmpl.Labels = map[string]string{"app": "job"}
	jobTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := jobs.Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: jobTmpl, TTLSecondsAfterFinished: ptr.To[int32](0)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts := rest.For[*appsv1.StatefulSet, *appsv1.StatefulSetList](c, appsv1.SchemeGroupVersion.WithResource("statefulsets"), true).Namespace("work")
	stsTmpl := *tmpl.DeepCopy()
	stsTmpl.Labels = map[string]string{"app": "db"}
	if _, err := sts.Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: stsTmpl.Labels}, Template: stsTmpl}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dss := rest.For[*appsv1.DaemonSet, *appsv1.DaemonSetList](c, appsv1.SchemeGroupVersion.WithResource("daemonsets"), true).Namespace("work")
	dsTmpl := *tmpl.DeepCopy()
	dsTmpl.Labels = map[string]string{"app": "agent"}
	if _, err := dss.Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: dsTmpl.Labels}, Template: dsTmpl}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotas := rest.For[*corev1.ResourceQuota, *corev1.ResourceQuotaList](c, corev1.SchemeGroupVersion.WithResource("resourcequotas"), true).Namespace("work")
	if _, err := quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("50")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdbs := rest.For[*policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudgetList](c, policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), true).Namespace("work")
	if _, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var state string
	waitFor(t, ctx, "workloads ready", func() bool {
		q, err5 := quotas.Get(ctx, "q", metav1.GetOptions{})
		pdb, err6 := pdbs.Get(ctx, "web", metav1.GetOptions{})
		if err5 != nil || err6 != nil || q.Status.Used.Pods().IsZero() || pdb.Status.CurrentHealthy < 3 {
			state = "quota and disruption budget status not counted yet"
			return false
		}
		d, err1 := deploys.Get(ctx, "web", metav1.GetOptions{})
		s, err2 := sts.Get(ctx, "db", metav1.GetOptions{})
		ds, err3 := dss.Get(ctx, "agent", metav1.GetOptions{})
		_, err4 := jobs.Get(ctx, "once", metav1.GetOptions{})
		if err1 != nil || err2 != nil || err3 != nil {
			return false
		}
		state = fmt.Sprintf("deployment available %d, statefulset ready %d, daemonset ready %d, job present %v",
			d.Status.AvailableReplicas, s.Status.ReadyReplicas, ds.Status.NumberReady, err4 == nil)
		if pl, err := rest.For[*corev1.Pod, *corev1.PodList](c, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("work").List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range pl.Items {
				state += fmt.Sprintf("; %s on %q %s", p.Name, p.Spec.NodeName, p.Status.Phase)
			}
		}
		if nl, err := rest.For[*corev1.Node, *corev1.NodeList](c, corev1.SchemeGroupVersion.WithResource("nodes"), false).List(ctx, metav1.ListOptions{}); err == nil {
			for _, n := range nl.Items {
				state += fmt.Sprintf("; node %s taints %v", n.Name, n.Spec.Taints)
			}
		}
		return d.Status.AvailableReplicas == 3 && s.Status.ReadyReplicas == 2 &&
			ds.Status.NumberReady == 2 && err4 != nil // the finished Job deleted by its TTL
	}, &state)
	if _, err := deploys.Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := nsRes.Delete(ctx, "work", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "namespace work deleted", func() bool {
		_, err := nsRes.Get(ctx, "work", metav1.GetOptions{})
		return err != nil
	}, nil)
}

// withDependencies gives the template what a kubelet must read before its
// pods run: env from a ConfigMap, a Secret volume, and a projected token
// of its ServiceAccount (as the ServiceAccount admission plugin, off in a
// bare test server, would add).
func withDependencies(tmpl corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	t := *tmpl.DeepCopy()
	t.Spec.ServiceAccountName = "default"
	t.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}
	t.Spec.Volumes = []corev1.Volume{
		{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-tls"}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
	}
	return t
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool, state *string) {
	t.Helper()
	timeout := time.Hour // ctx's deadline ends the wait
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := testwait.Poll(ctx, timeout, 100*time.Millisecond, testwait.Bool(cond)); err != nil {
		if state != nil {
			what += ": " + *state
		}
		t.Fatalf("timed out waiting for %s", what)
	}
}
