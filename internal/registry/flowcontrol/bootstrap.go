package flowcontrol

import (
	_ "embed"
	"encoding/json"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// bootstrapJSON holds the names, annotations and specs of the FlowSchemas
// and PriorityLevelConfigurations kube-apiserver v1.37.2 creates at start
// (`kubectl get flowschemas,prioritylevelconfigurations -o json` of a new
// cluster).
//
//go:embed bootstrap.json
var bootstrapJSON []byte

type bootstrapConfig struct {
	FlowSchemas                 []flowcontrolv1.FlowSchema                 `json:"flowSchemas"`
	PriorityLevelConfigurations []flowcontrolv1.PriorityLevelConfiguration `json:"priorityLevelConfigurations"`
}

// loadBootstrap decodes the configuration objects; they are fixed data, so
// a failure is a programming error.
func loadBootstrap() bootstrapConfig {
	var c bootstrapConfig
	if err := json.Unmarshal(bootstrapJSON, &c); err != nil {
		panic(fmt.Sprintf("flowcontrol: bootstrap.json: %v", err))
	}
	return c
}

// mandatory returns the spec of a mandatory object (exempt, catch-all)
// that no update may change.
func mandatoryFlowSchema(name string) (flowcontrolv1.FlowSchemaSpec, bool) {
	if name != flowcontrolv1.FlowSchemaNameExempt && name != flowcontrolv1.FlowSchemaNameCatchAll {
		return flowcontrolv1.FlowSchemaSpec{}, false
	}
	for _, fs := range loadBootstrap().FlowSchemas {
		if fs.Name == name {
			return fs.Spec, true
		}
	}
	return flowcontrolv1.FlowSchemaSpec{}, false
}

func mandatoryPriorityLevel(name string) (flowcontrolv1.PriorityLevelConfigurationSpec, bool) {
	if name != flowcontrolv1.PriorityLevelConfigurationNameExempt && name != flowcontrolv1.PriorityLevelConfigurationNameCatchAll {
		return flowcontrolv1.PriorityLevelConfigurationSpec{}, false
	}
	for _, pl := range loadBootstrap().PriorityLevelConfigurations {
		if pl.Name == name {
			return pl.Spec, true
		}
	}
	return flowcontrolv1.PriorityLevelConfigurationSpec{}, false
}

func bootstrapFlowSchemas() []runtime.Object {
	now := metav1.Now()
	var out []runtime.Object
	for _, fs := range loadBootstrap().FlowSchemas {
		fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{DanglingCondition(fs.Spec.PriorityLevelConfiguration.Name, false, now)}
		out = append(out, &fs)
	}
	return out
}

func bootstrapPriorityLevels() []runtime.Object {
	var out []runtime.Object
	for _, pl := range loadBootstrap().PriorityLevelConfigurations {
		out = append(out, &pl)
	}
	return out
}
