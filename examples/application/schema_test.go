package application_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/setpoint-dev/setpoint/examples/application"
)

// TestApplicationSchema checks config/crd.yaml as the server applies it:
// bad input is refused with 422 naming the field (a string replica count,
// replicas and ports out of range, a missing or empty image, a phase
// outside the enum); unset replicas and port are defaulted to 1 and 80;
// the client creates a typed Application without a TypeMeta.
func TestApplicationSchema(t *testing.T) {
	f := start(t, false)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spec  map[string]any
		field string
		msg   string
	}{
		{"replicas not a number", map[string]any{"image": "nginx", "replicas": "x"}, "spec.replicas", "integer"},
		{"too many replicas", map[string]any{"image": "nginx", "replicas": int64(101)}, "spec.replicas", "100"},
		{"negative replicas", map[string]any{"image": "nginx", "replicas": int64(-1)}, "spec.replicas", "0"},
		{"port zero", map[string]any{"image": "nginx", "port": int64(0)}, "spec.port", "1"},
		{"port too big", map[string]any{"image": "nginx", "port": int64(65536)}, "spec.port", "65535"},
		{"missing image", map[string]any{"replicas": int64(1)}, "spec.image", "Required"},
		{"empty image", map[string]any{"image": ""}, "spec.image", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": application.GroupVersion.String(), "kind": application.Kind,
				"metadata": map[string]any{"name": "bad", "namespace": "default"}, "spec": tc.spec}}
			checkInvalid(t, f.client.Create(ctx, obj), tc.field, tc.msg)
		})
	}

	// Defaults, through the typed client, without a TypeMeta.
	got := newApp("plain", "nginx:1.25", 0, 0)
	if err := f.client.Create(ctx, got); err != nil {
		t.Fatalf("create without TypeMeta: %v", err)
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 1 || got.Spec.Port == nil || *got.Spec.Port != 80 {
		t.Fatalf("defaults: replicas %v port %v", got.Spec.Replicas, got.Spec.Port)
	}
	if got.Kind != application.Kind || got.APIVersion != "apps.setpoint.dev/v1" {
		t.Fatalf("answer's TypeMeta %+v", got.TypeMeta)
	}

	// The status enum, through the status subresource.
	got.Status.Phase = "Bogus"
	checkInvalid(t, f.client.Status().Update(ctx, got), "status.phase", "Running")
}

// checkInvalid expects a 422 whose causes name field and, in the same
// cause, msg.
func checkInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	var st *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &st) || st.ErrStatus.Code != 422 || st.ErrStatus.Details == nil {
		t.Fatalf("err %v, want 422 Invalid with details", err)
	}
	var causes []string
	for _, c := range st.ErrStatus.Details.Causes {
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
		causes = append(causes, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	t.Fatalf("no cause on %s mentioning %q: %q", field, msg, causes)
}
