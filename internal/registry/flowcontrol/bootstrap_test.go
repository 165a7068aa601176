package flowcontrol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	fcreg "github.com/setpoint-dev/setpoint/internal/registry/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestBootstrapRecorded is the generator of bootstrap.json: with
// SETPOINT_REFERENCE_KUBECONFIG naming the kubeconfig of a new
// kube-apiserver v1.37.2 cluster, it records the names, annotations and
// specs of the FlowSchemas and PriorityLevelConfigurations that server
// created and rewrites the file:
//
//	SETPOINT_REFERENCE_KUBECONFIG=/work/refdump/kubeconfig \
//	    go test ./internal/registry/flowcontrol -run TestBootstrapRecorded -count=1
//
// Without it, it checks the recorded file: both mandatory objects of each
// kind, every FlowSchema naming a recorded priority level, every object
// marked for automatic update.
func TestBootstrapRecorded(t *testing.T) {
	if kc := os.Getenv(reftest.Env); kc != "" {
		recordBootstrap(t, kc)
	}
	fss, pls := fcreg.Config()
	levels := map[string]bool{}
	for _, pl := range pls {
		levels[pl.Name] = true
		if pl.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("priority level %s lacks the autoupdate annotation", pl.Name)
		}
	}
	for _, fs := range fss {
		if !levels[fs.Spec.PriorityLevelConfiguration.Name] {
			t.Errorf("FlowSchema %s names a missing level", fs.Name)
		}
		if fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("FlowSchema %s lacks the autoupdate annotation", fs.Name)
		}
	}
	mfs, mpl := fcreg.MandatoryConfig()
	if len(mfs) != 2 || len(mpl) != 2 {
		t.Errorf("mandatory objects: %d FlowSchemas, %d levels", len(mfs), len(mpl))
	}
}

func recordBootstrap(t *testing.T, kubeconfig string) {
	ref := reftest.Reference(t, kubeconfig)
	out := map[string]any{}
	for key, resource := range map[string]string{"flowSchemas": "flowschemas", "priorityLevelConfigurations": "prioritylevelconfigurations"} {
		var list struct {
			Items []struct {
				Metadata struct {
					Name        string            `json:"name"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
				Spec any `json:"spec"`
			} `json:"items"`
		}
		ref.Must(t, "GET", "/apis/flowcontrol.apiserver.k8s.io/v1/"+resource, "", 200, &list)
		var items []any
		for _, it := range list.Items {
			items = append(items, map[string]any{
				"metadata": map[string]any{"name": it.Metadata.Name, "annotations": it.Metadata.Annotations},
				"spec":     it.Spec,
			})
		}
		sort.Slice(items, func(i, j int) bool {
			return items[i].(map[string]any)["metadata"].(map[string]any)["name"].(string) <
				items[j].(map[string]any)["metadata"].(map[string]any)["name"].(string)
		})
		out[key] = items
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile("bootstrap.json"); err == nil && bytes.Equal(b, old) {
		t.Log("bootstrap.json is up to date")
		return
	}
	if err := os.WriteFile("bootstrap.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("bootstrap.json rewritten; rebuild to embed it")
}
