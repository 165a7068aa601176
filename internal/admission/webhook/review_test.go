package webhook

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TestOptionsJSON: the options object of each operation, dry run or not,
// is what encoding/json makes of the metav1 options kube-apiserver sends.
func TestOptionsJSON(t *testing.T) {
	for _, dry := range []bool{false, true} {
		var dryRun []string
		if dry {
			dryRun = []string{metav1.DryRunAll}
		}
		tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{Kind: kind, APIVersion: "meta.k8s.io/v1"} }
		for op, obj := range map[registry.Operation]any{
			registry.Create: &metav1.CreateOptions{TypeMeta: tm("CreateOptions"), DryRun: dryRun},
			registry.Update: &metav1.UpdateOptions{TypeMeta: tm("UpdateOptions"), DryRun: dryRun},
			registry.Delete: &metav1.DeleteOptions{TypeMeta: tm("DeleteOptions"), DryRun: dryRun},
		} {
			want, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			got := options(&registry.Attributes{Operation: op, Request: registry.Request{DryRun: dry}})
			if string(got.Raw) != string(want) {
				t.Errorf("%s dryRun=%v: %s, want %s", op, dry, got.Raw, want)
			}
		}
	}
	if got := options(&registry.Attributes{Operation: "CONNECT"}); got.Raw != nil {
		t.Errorf("CONNECT: %s, want none", got.Raw)
	}
}
