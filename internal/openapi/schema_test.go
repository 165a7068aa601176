package openapi_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
)

func newService(t *testing.T) *openapi.Service {
	t.Helper()
	s, err := openapi.New(discoverytest.Resources(), openapi.Options{Version: "v1.37.0-setpoint"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaOf(t *testing.T, schemas map[string]*spec.Schema, name string) *spec.Schema {
	t.Helper()
	s, ok := schemas[name]
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	return s
}

func property(t *testing.T, s *spec.Schema, name string) spec.Schema {
	t.Helper()
	p, ok := s.Properties[name]
	if !ok {
		t.Fatalf("schema %q has no property %s", s.Description, name)
	}
	return p
}

// refOf returns the definition a property points to (directly or through
// a one-element allOf).
func refOf(p spec.Schema) string {
	if len(p.AllOf) == 1 {
		p = p.AllOf[0]
	}
	return p.Ref.String()
}

func TestModelName(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[corev1.Pod]():          "io.k8s.api.core.v1.Pod",
		reflect.TypeFor[*appsv1.Deployment]():  "io.k8s.api.apps.v1.Deployment",
		reflect.TypeFor[metav1.ObjectMeta]():   "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		reflect.TypeFor[resource.Quantity]():   "io.k8s.apimachinery.pkg.api.resource.Quantity",
		reflect.TypeFor[intstr.IntOrString]():  "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		reflect.TypeFor[openapi.Options]():     "com.github.setpoint_dev.setpoint.internal.openapi.Options",
		reflect.TypeFor[discoverytestMarker](): "com.github.setpoint_dev.setpoint.internal.openapi_test.discoverytestMarker",
	} {
		if got := openapi.ModelName(typ); got != want {
			t.Errorf("ModelName(%v) = %s, want %s", typ, got, want)
		}
	}
}

type discoverytestMarker struct{}

func TestPodSchema(t *testing.T) {
	schemas := newService(t).Schemas()
	pod := schemaOf(t, schemas, "io.k8s.api.core.v1.Pod")
	if pod.Description == "" || !slices.Equal(pod.Type, spec.StringOrArray{"object"}) {
		t.Errorf("Pod: description %q, type %v", pod.Description, pod.Type)
	}
	gvk, ok := pod.Extensions["x-kubernetes-group-version-kind"].([]any)
	wantGVK := []any{map[string]any{"group": "", "version": "v1", "kind": "Pod"}}
	if !ok || !reflect.DeepEqual(gvk, wantGVK) {
		t.Errorf("Pod GVK extension = %#v, want %#v", pod.Extensions["x-kubernetes-group-version-kind"], wantGVK)
	}
	for _, field := range []string{"apiVersion", "kind"} { // from the embedded TypeMeta
		if p := property(t, pod, field); !slices.Equal(p.Type, spec.StringOrArray{"string"}) || p.Description == "" {
			t.Errorf("Pod.%s = %+v", field, p)
		}
	}
	if got := refOf(property(t, pod, "metadata")); got != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("Pod.metadata refers to %s", got)
	}
	if len(pod.Required) != 0 {
		t.Errorf("Pod.required = %v, want none", pod.Required)
	}

	podSpec := schemaOf(t, schemas, "io.k8s.api.core.v1.PodSpec")
	containers := property(t, podSpec, "containers")
	if !slices.Equal(containers.Type, spec.StringOrArray{"array"}) || containers.Items == nil ||
		containers.Items.Schema.Ref.String() != "#/components/schemas/io.k8s.api.core.v1.Container" {
		t.Fatalf("PodSpec.containers = %+v", containers)
	}
	wantExt := spec.Extensions{
		"x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge",
		"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
	}
	if !reflect.DeepEqual(containers.Extensions, wantExt) {
		t.Errorf("PodSpec.containers extensions = %v, want %v", containers.Extensions, wantExt)
	}
	if !slices.Contains(podSpec.Required, "containers") {
		t.Errorf("PodSpec.required = %v, want containers in it", podSpec.Required)
	}
	container := schemaOf(t, schemas, "io.k8s.api.core.v1.Container")
	if !slices.Equal(container.Required, []string{"name"}) {
		t.Errorf("Container.required = %v, want [name]", container.Required)
	}
	ports := property(t, container, "ports")
	if keys := ports.Extensions["x-kubernetes-list-map-keys"]; !reflect.DeepEqual(keys, []any{"containerPort", "protocol"}) {
		t.Errorf("Container.ports list-map-keys = %v", keys)
	}
	meta := schemaOf(t, schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	finalizers := property(t, meta, "finalizers")
	if finalizers.Extensions["x-kubernetes-list-type"] != "set" || finalizers.Extensions["x-kubernetes-patch-strategy"] != "merge" {
		t.Errorf("ObjectMeta.finalizers extensions = %v", finalizers.Extensions)
	}
	labels := property(t, meta, "labels")
	if labels.AdditionalProperties == nil || !slices.Equal(labels.AdditionalProperties.Schema.Type, spec.StringOrArray{"string"}) {
		t.Errorf("ObjectMeta.labels = %+v, want a string map", labels)
	}
	if got := refOf(property(t, meta, "creationTimestamp")); got != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time" {
		t.Errorf("ObjectMeta.creationTimestamp refers to %s", got)
	}
}

func TestSpecialSchemas(t *testing.T) {
	schemas := newService(t).Schemas()
	for name, want := range map[string]string{
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time":      `{"type":"string","format":"date-time"}`,
		"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": `{"type":"string","format":"date-time"}`,
		"io.k8s.apimachinery.pkg.runtime.RawExtension":   `{"type":"object"}`,
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1":  `{"type":"object"}`,
		"io.k8s.apimachinery.pkg.api.resource.Quantity":  `{"oneOf":[{"type":"string"},{"type":"number"}]}`,
		// kube-apiserver marks IntOrString by its format only.
		"io.k8s.apimachinery.pkg.util.intstr.IntOrString": `{"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`,
	} {
		s := *schemaOf(t, schemas, name)
		if s.Description == "" {
			t.Errorf("%s has no description", name)
		}
		s.Description = ""
		got, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	configMap := schemaOf(t, schemas, "io.k8s.api.core.v1.ConfigMap")
	binary := property(t, configMap, "binaryData").AdditionalProperties.Schema
	if !slices.Equal(binary.Type, spec.StringOrArray{"string"}) || binary.Format != "byte" {
		t.Errorf("ConfigMap.binaryData values = %+v, want string/byte", binary)
	}
	strategy := property(t, schemaOf(t, schemas, "io.k8s.api.apps.v1.DeploymentSpec"), "strategy")
	if strategy.Extensions["x-kubernetes-patch-strategy"] != "retainKeys" {
		t.Errorf("DeploymentSpec.strategy extensions = %v", strategy.Extensions)
	}
	limits := property(t, schemaOf(t, schemas, "io.k8s.api.core.v1.ResourceRequirements"), "limits")
	if limits.AdditionalProperties.Schema.Ref.String() != "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity" {
		t.Errorf("ResourceRequirements.limits = %+v", limits)
	}
	replicas := property(t, schemaOf(t, schemas, "io.k8s.api.apps.v1.DeploymentSpec"), "replicas")
	if !slices.Equal(replicas.Type, spec.StringOrArray{"integer"}) || replicas.Format != "int32" {
		t.Errorf("DeploymentSpec.replicas = %+v", replicas)
	}
	// DeleteOptions lists every group-version of kube-apiserver's scheme
	// (generated facts); each v3 document narrows it to its own.
	deleteOptions := schemaOf(t, schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
	if n := len(deleteOptions.Extensions["x-kubernetes-group-version-kind"].([]any)); n != 62 {
		t.Errorf("DeleteOptions has %d GVKs, want kube-apiserver's 62", n)
	}
}

// TestStrategicMergeWithSchemas merges a patch the way kubectl apply does
// with OpenAPI v3 patch metadata: containers merge by name.
func TestStrategicMergeWithSchemas(t *testing.T) {
	schemas := newService(t).Schemas()
	meta := strategicpatch.PatchMetaFromOpenAPIV3{
		SchemaList: schemas, Schema: schemaOf(t, schemas, "io.k8s.api.core.v1.Pod"),
	}
	original := `{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}],` +
		`"volumes":[{"name":"v","emptyDir":{}}]},"metadata":{"finalizers":["x"]}}`
	patch := `{"spec":{"containers":[{"name":"b","image":"b:2"}]},"metadata":{"finalizers":["y"]}}`
	merged, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta([]byte(original), []byte(patch), meta)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Containers) != 2 || got.Spec.Containers[0].Image != "a:1" || got.Spec.Containers[1].Image != "b:2" {
		t.Errorf("containers after merge = %+v", got.Spec.Containers)
	}
	slices.Sort(got.Finalizers) // a merged set keeps both, in no promised order
	if !slices.Equal(got.Finalizers, []string{"x", "y"}) || len(got.Spec.Volumes) != 1 {
		t.Errorf("merged pod = %s", merged)
	}
}

// TestTypeConverter builds the server-side-apply type converter from the
// schemas, as kube-apiserver does, and converts typed objects with it.
func TestTypeConverter(t *testing.T) {
	converter, err := managedfields.NewTypeConverter(newService(t).Schemas(), false)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "nginx",
			Ports:     []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
		}}},
	}
	typed, err := converter.ObjectToTyped(pod)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := typed.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	if fields.Empty() {
		t.Error("typed pod has no fields")
	}
	deployment := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromString("25%"))},
		}},
	}
	if _, err := converter.ObjectToTyped(deployment); err != nil {
		t.Errorf("deployment: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestNewRejectsBadResources(t *testing.T) {
	noTypes := discoverytest.Resources()
	noTypes[0].New = nil
	if _, err := openapi.New(noTypes, openapi.Options{}); err == nil {
		t.Error("New accepted a resource without New")
	}
	clash := discoverytest.Resources()
	clash[1].Kind = "Pod" // configmaps' Go type claiming v1 Pod
	if _, err := openapi.New(clash, openapi.Options{}); err == nil {
		t.Error("New accepted two Go types for v1 Pod")
	}
}

// TestGeneratedFacts: the facts kube-apiserver takes from comments are
// published in both dialects (defaults in OpenAPI v3 only), and a
// reference without siblings stays bare in v3.
func TestGeneratedFacts(t *testing.T) {
	schemas := newService(t).Schemas()
	container := schemaOf(t, schemas, "io.k8s.api.core.v1.Container")
	if got := property(t, container, "imagePullPolicy").Enum; fmt.Sprint(got) != "[Always IfNotPresent Never]" {
		t.Errorf("Container.imagePullPolicy enum = %v", got)
	}
	if got := container.Required; fmt.Sprint(got) != "[name]" {
		t.Errorf("Container.required = %v", got)
	}
	if got := property(t, container, "args").Extensions["x-kubernetes-list-type"]; got != "atomic" {
		t.Errorf("Container.args list type = %v", got)
	}
	port := schemaOf(t, schemas, "io.k8s.api.core.v1.ContainerPort")
	if got := property(t, port, "protocol").Default; got != "TCP" {
		t.Errorf("ContainerPort.protocol default = %v", got)
	}
	if got := schemaOf(t, schemas, "io.k8s.api.core.v1.ConfigMapKeySelector").Extensions["x-kubernetes-map-type"]; got != "atomic" {
		t.Errorf("ConfigMapKeySelector map type = %v", got)
	}
	if got := property(t, schemaOf(t, schemas, "io.k8s.api.core.v1.PodSpec"), "nodeSelector").Extensions["x-kubernetes-map-type"]; got != "atomic" {
		t.Errorf("PodSpec.nodeSelector map type = %v", got)
	}
}
