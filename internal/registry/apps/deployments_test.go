package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
}

func newDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: newTemplate(),
		},
	}
}

func TestDeploymentDefaults(t *testing.T) {
	d := newDeployment()
	d.Status.Replicas = 7 // reset on create
	expectValid(t, create(lookup(t, "deployments"), d))
	s := d.Spec
	ru := s.Strategy.RollingUpdate
	ts := s.Template.Spec
	checks := map[string][2]any{
		"replicas":                {*s.Replicas, int32(1)},
		"strategy":                {s.Strategy.Type, appsv1.RollingUpdateDeploymentStrategyType},
		"maxSurge":                {ru.MaxSurge.String(), "25%"},
		"maxUnavailable":          {ru.MaxUnavailable.String(), "25%"},
		"revisionHistoryLimit":    {*s.RevisionHistoryLimit, int32(10)},
		"progressDeadlineSeconds": {*s.ProgressDeadlineSeconds, int32(600)},
		"template restartPolicy":  {ts.RestartPolicy, corev1.RestartPolicyAlways},
		"template pull policy":    {ts.Containers[0].ImagePullPolicy, corev1.PullAlways},
		"template grace":          {*ts.TerminationGracePeriodSeconds, int64(30)},
		"template no serviceLink": {ts.EnableServiceLinks == nil, true},
		"status reset":            {d.Status.Replicas, int32(0)},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
}

func TestDeploymentValidation(t *testing.T) {
	ru := func(d *appsv1.Deployment, surge, unavailable intstr.IntOrString) {
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}
	}
	cases := map[string]struct {
		mutate func(*appsv1.Deployment)
		want   []string
	}{
		"no selector":       {func(d *appsv1.Deployment) { d.Spec.Selector = nil }, []string{"spec.selector:FieldValueRequired", "spec.template.metadata.labels:FieldValueInvalid"}},
		"empty selector":    {func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, []string{"spec.selector:FieldValueInvalid"}},
		"selector mismatch": {func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "other"} }, []string{"spec.template.metadata.labels:FieldValueInvalid"}},
		"bad selector":      {func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels = map[string]string{"app": "a b"} }, []string{"spec.selector.matchLabels:FieldValueInvalid", "spec.selector:FieldValueInvalid"}},
		"negative replicas": {func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(-1)) }, []string{"spec.replicas:FieldValueInvalid"}},
		"both zero":         {func(d *appsv1.Deployment) { ru(d, intstr.FromInt32(0), intstr.FromString("0%")) }, []string{"spec.strategy.rollingUpdate.maxUnavailable:FieldValueInvalid"}},
		"bad percent":       {func(d *appsv1.Deployment) { ru(d, intstr.FromString("25"), intstr.FromInt32(1)) }, []string{"spec.strategy.rollingUpdate.maxSurge:FieldValueInvalid"}},
		"over 100%":         {func(d *appsv1.Deployment) { ru(d, intstr.FromInt32(1), intstr.FromString("150%")) }, []string{"spec.strategy.rollingUpdate.maxUnavailable:FieldValueInvalid"}},
		"bad strategy type": {func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, []string{"spec.strategy:FieldValueNotSupported"}},
		"recreate with rolling": {func(d *appsv1.Deployment) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{}}
		}, []string{"spec.strategy.rollingUpdate:FieldValueForbidden"}},
		"negative history":     {func(d *appsv1.Deployment) { d.Spec.RevisionHistoryLimit = new(int32(-1)) }, []string{"spec.revisionHistoryLimit:FieldValueInvalid"}},
		"negative minReady":    {func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = -1 }, []string{"spec.minReadySeconds:FieldValueInvalid"}},
		"deadline <= minReady": {func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 700 }, []string{"spec.progressDeadlineSeconds:FieldValueInvalid"}},
		"restart Never":        {func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, []string{"spec.template.spec.restartPolicy:FieldValueNotSupported"}},
		"active deadline":      {func(d *appsv1.Deployment) { d.Spec.Template.Spec.ActiveDeadlineSeconds = new(int64(10)) }, []string{"spec.template.spec.activeDeadlineSeconds:FieldValueForbidden"}},
		"bad container name":   {func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Name = "a_b" }, []string{"spec.template.spec.containers[0].name:FieldValueInvalid"}},
		"bad template label":   {func(d *appsv1.Deployment) { d.Spec.Template.Labels["-x"] = "1" }, []string{"spec.template.labels:FieldValueInvalid"}},
		"bad name":             {func(d *appsv1.Deployment) { d.Name = "Web" }, []string{"metadata.name:FieldValueInvalid"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := newDeployment()
			c.mutate(d)
			expectErrors(t, create(lookup(t, "deployments"), d), c.want...)
		})
	}
}

func storedDeployment(t *testing.T) *appsv1.Deployment {
	d := newDeployment()
	d.ResourceVersion = "3"
	expectValid(t, create(lookup(t, "deployments"), d))
	return d
}

func TestDeploymentUpdate(t *testing.T) {
	r := lookup(t, "deployments")
	old := storedDeployment(t)
	old.Status.Replicas = 1

	d := old.DeepCopy()
	d.Spec.Replicas = new(int32(3))
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	d.Status.Replicas = 9
	expectValid(t, update(r, d, old))
	if d.Status.Replicas != 1 {
		t.Errorf("main update changed status.replicas to %d", d.Status.Replicas)
	}

	d = old.DeepCopy()
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}
	d.Spec.Template.Labels["tier"] = "x"
	expectErrors(t, update(r, d, old), "spec.selector:FieldValueInvalid")
}

func TestDeploymentStatusUpdate(t *testing.T) {
	r := lookup(t, "deployments")
	old := storedDeployment(t)
	d := old.DeepCopy()
	d.Spec.Replicas = new(int32(5))
	d.Labels = map[string]string{"x": "y"}
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "2"}
	d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1, ObservedGeneration: 1}
	expectValid(t, updateStatus(r, d, old))
	if *d.Spec.Replicas != 1 || d.Labels != nil || d.Status.ReadyReplicas != 1 {
		t.Errorf("status update: replicas %d labels %v ready %d", *d.Spec.Replicas, d.Labels, d.Status.ReadyReplicas)
	}
	// Kubernetes keeps annotations of a status update (the deployment
	// controller's revision annotation is written that way).
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("status update dropped annotations: %v", d.Annotations)
	}

	bad := old.DeepCopy()
	bad.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 2, AvailableReplicas: -1}
	expectErrors(t, updateStatus(r, bad, old),
		"status.availableReplicas:FieldValueInvalid", "status.readyReplicas:FieldValueInvalid")
	// kube-apiserver's order: the non-negative checks, then updated,
	// ready and available against status.replicas.
	bad.Status = appsv1.DeploymentStatus{Replicas: -1}
	expectErrors(t, updateStatus(r, bad, old), "status.replicas:FieldValueInvalid",
		"status.updatedReplicas:FieldValueInvalid", "status.readyReplicas:FieldValueInvalid", "status.availableReplicas:FieldValueInvalid")
}

func TestDeploymentScaleAndAttrs(t *testing.T) {
	r := lookup(t, "deployments")
	d := storedDeployment(t)
	d.Status.Replicas = 1
	if err := r.Scale.SetReplicas(d, 4); err != nil {
		t.Fatal(err)
	}
	spec, status, sel, err := r.Scale.Replicas(d)
	if err != nil || spec != 4 || status != 1 || sel != "app=web" {
		t.Errorf("scale = %d %d %q %v", spec, status, sel, err)
	}
	if err := r.Scale.SetReplicas(d, -1); err == nil {
		t.Error("negative replicas accepted")
	}
	d.Spec.Replicas = nil
	if spec, _, _, _ := r.Scale.Replicas(d); spec != 1 {
		t.Errorf("unset replicas read as %d, want 1", spec)
	}
	expectFields(t, r, d, fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

// TestDeploymentStrategyTypeMessage: as kube-apiserver, an unknown
// strategy type shows the whole strategy in its internal form.
func TestDeploymentStrategyTypeMessage(t *testing.T) {
	for _, c := range []struct {
		strategy appsv1.DeploymentStrategy
		want     string
	}{
		{appsv1.DeploymentStrategy{Type: "Gradual"}, `spec.strategy: Unsupported value: {"Type":"Gradual","RollingUpdate":null}: supported values: "Recreate", "RollingUpdate"`},
		{appsv1.DeploymentStrategy{Type: "Gradual", RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: new(intstr.FromString("25%"))}},
			`spec.strategy: Unsupported value: {"Type":"Gradual","RollingUpdate":{"MaxUnavailable":0,"MaxSurge":"25%"}}: supported values: "Recreate", "RollingUpdate"`},
	} {
		errs := validateDeploymentStrategy(&c.strategy, field.NewPath("spec", "strategy"))
		if len(errs) != 1 || errs[0].Error() != c.want {
			t.Errorf("errors %v, want %s", errs, c.want)
		}
	}
}
