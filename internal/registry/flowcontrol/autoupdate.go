package flowcontrol

import (
	"fmt"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The configuration objects kube-apiserver keeps up to date at every
// start (its "config producer"): the mandatory ones (exempt, catch-all)
// always, the suggested ones while the apf.kubernetes.io/autoupdate-spec
// annotation says "true" (or, without a boolean annotation, while nobody
// has changed them: generation 1). An object that is no longer part of
// the configuration is deleted when its annotation says "true".

// ProducerFieldManager is the field manager of those writes.
const ProducerFieldManager = "api-priority-and-fairness-config-producer-v1"

// ConsumerFieldManager is the field manager of the FlowSchema status
// (Dangling condition) the API server writes.
const ConsumerFieldManager = "api-priority-and-fairness-config-consumer-v1"

// Config returns fresh copies of the FlowSchemas and
// PriorityLevelConfigurations kube-apiserver v1.37.2 creates, without
// status, each annotated for automatic update.
func Config() ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	c := loadBootstrap()
	fss := make([]*flowcontrolv1.FlowSchema, len(c.FlowSchemas))
	for i := range c.FlowSchemas {
		fss[i] = &c.FlowSchemas[i]
	}
	pls := make([]*flowcontrolv1.PriorityLevelConfiguration, len(c.PriorityLevelConfigurations))
	for i := range c.PriorityLevelConfigurations {
		pls[i] = &c.PriorityLevelConfigurations[i]
	}
	return fss, pls
}

// MandatoryConfig returns the exempt and catch-all objects.
func MandatoryConfig() ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	var fss []*flowcontrolv1.FlowSchema
	var pls []*flowcontrolv1.PriorityLevelConfiguration
	all, allPL := Config()
	for _, fs := range all {
		if _, ok := mandatoryFlowSchema(fs.Name); ok {
			fss = append(fss, fs)
		}
	}
	for _, pl := range allPL {
		if _, ok := mandatoryPriorityLevel(pl.Name); ok {
			pls = append(pls, pl)
		}
	}
	return fss, pls
}

// IsMandatory reports whether name is a mandatory object's.
func IsMandatory(name string) bool {
	return name == flowcontrolv1.FlowSchemaNameExempt || name == flowcontrolv1.FlowSchemaNameCatchAll
}

// autoUpdateWanted reports whether a stored suggested object may be
// brought to the built-in spec.
func autoUpdateWanted(annotations map[string]string, generation int64) bool {
	if v, err := strconv.ParseBool(annotations[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return generation == 1
}

// AutoUpdatedFlowSchema returns what to store for the stored FlowSchema
// cur, of the same name as the built-in want, or nil to leave it.
func AutoUpdatedFlowSchema(cur, want *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
	if !IsMandatory(cur.Name) && !autoUpdateWanted(cur.Annotations, cur.Generation) {
		return nil
	}
	if apiequality.Semantic.DeepEqual(cur.Spec, want.Spec) && cur.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] == "true" {
		return nil
	}
	out := cur.DeepCopy()
	out.Spec = *want.Spec.DeepCopy()
	setAutoUpdate(&out.Annotations)
	return out
}

// AutoUpdatedPriorityLevel is AutoUpdatedFlowSchema for priority levels.
func AutoUpdatedPriorityLevel(cur, want *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	if !IsMandatory(cur.Name) && !autoUpdateWanted(cur.Annotations, cur.Generation) {
		return nil
	}
	if apiequality.Semantic.DeepEqual(cur.Spec, want.Spec) && cur.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] == "true" {
		return nil
	}
	out := cur.DeepCopy()
	out.Spec = *want.Spec.DeepCopy()
	setAutoUpdate(&out.Annotations)
	return out
}

func setAutoUpdate(a *map[string]string) {
	if *a == nil {
		*a = map[string]string{}
	}
	(*a)[flowcontrolv1.AutoUpdateAnnotationKey] = "true"
}

// Obsolete reports whether a stored object that is not part of the
// built-in configuration is to be deleted: it carries the annotation
// "true" (the API server made it and keeps it).
func Obsolete(annotations map[string]string) bool {
	v, err := strconv.ParseBool(annotations[flowcontrolv1.AutoUpdateAnnotationKey])
	return err == nil && v
}

// DanglingCondition is the Dangling condition of a FlowSchema naming the
// priority level pl: True (NotFound) when pl does not exist, False
// (Found) when it does, with kube-apiserver's messages.
func DanglingCondition(pl string, dangling bool, now metav1.Time) flowcontrolv1.FlowSchemaCondition {
	c := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, LastTransitionTime: now}
	if dangling {
		c.Status, c.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		c.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", pl)
	} else {
		c.Status, c.Reason = flowcontrolv1.ConditionFalse, "Found"
		c.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", pl)
	}
	return c
}
