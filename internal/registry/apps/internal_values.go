package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube-apiserver validates its internal types, whose fields have no JSON
// names: a struct-valued field error shows the Go field names
// ({"Type":"Foo","RollingUpdate":…}). These mirrors render the same.

type internalStsRollingUpdate struct {
	Partition      int32
	MaxUnavailable *intstr.IntOrString
}

type internalStsStrategy struct {
	Type          appsv1.StatefulSetUpdateStrategyType
	RollingUpdate *internalStsRollingUpdate
}

func internalRollingUpdate(ru *appsv1.RollingUpdateStatefulSetStrategy) *internalStsRollingUpdate {
	if ru == nil {
		return nil
	}
	out := &internalStsRollingUpdate{MaxUnavailable: ru.MaxUnavailable}
	if ru.Partition != nil {
		out.Partition = *ru.Partition
	}
	return out
}

func internalStatefulSetStrategy(s *appsv1.StatefulSetUpdateStrategy) internalStsStrategy {
	return internalStsStrategy{Type: s.Type, RollingUpdate: internalRollingUpdate(s.RollingUpdate)}
}

type internalDsRollingUpdate struct {
	MaxUnavailable intstr.IntOrString
	MaxSurge       intstr.IntOrString
}

type internalDsStrategy struct {
	Type          appsv1.DaemonSetUpdateStrategyType
	RollingUpdate *internalDsRollingUpdate
}

func internalDaemonSetStrategy(s *appsv1.DaemonSetUpdateStrategy) internalDsStrategy {
	out := internalDsStrategy{Type: s.Type}
	if ru := s.RollingUpdate; ru != nil {
		out.RollingUpdate = &internalDsRollingUpdate{}
		if ru.MaxUnavailable != nil {
			out.RollingUpdate.MaxUnavailable = *ru.MaxUnavailable
		}
		if ru.MaxSurge != nil {
			out.RollingUpdate.MaxSurge = *ru.MaxSurge
		}
	}
	return out
}

// notMoreThan100Percent refuses a percentage above 100%.
func notMoreThan100Percent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if n, ok := percentValue(v); !ok || n <= 100 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
}

// percentValue is the number of a valid percentage; ok is false for an
// integer or an invalid string.
func percentValue(v *intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) > 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

// intOrPercentValue is Kubernetes' reading of an int-or-percent in its
// zero checks: the percentage's number, else the integer value (an
// invalid string reads as 0).
func intOrPercentValue(v *intstr.IntOrString) int {
	if v == nil {
		return 0
	}
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

type internalDeployRollingUpdate struct {
	MaxUnavailable intstr.IntOrString
	MaxSurge       intstr.IntOrString
}

type internalDeployStrategy struct {
	Type          appsv1.DeploymentStrategyType
	RollingUpdate *internalDeployRollingUpdate
}

func internalDeploymentStrategy(s *appsv1.DeploymentStrategy) internalDeployStrategy {
	out := internalDeployStrategy{Type: s.Type}
	if ru := s.RollingUpdate; ru != nil {
		out.RollingUpdate = &internalDeployRollingUpdate{}
		if ru.MaxUnavailable != nil {
			out.RollingUpdate.MaxUnavailable = *ru.MaxUnavailable
		}
		if ru.MaxSurge != nil {
			out.RollingUpdate.MaxSurge = *ru.MaxSurge
		}
	}
	return out
}
