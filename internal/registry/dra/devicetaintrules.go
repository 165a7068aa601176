package dra

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func deviceTaintRulesResource() *registry.Resource {
	type rule = resourcev1.DeviceTaintRule
	return &registry.Resource{
		Group: Group, Version: "v1", Resource: "devicetaintrules", Kind: "DeviceTaintRule", ListKind: "DeviceTaintRuleList",
		Singular:              "devicetaintrule",
		StorageVersion:        "v1beta2", // kube-apiserver's storage version: discovery's storageVersionHash
		NoUnconditionalUpdate: true,      // as kube-apiserver: a PUT must name a resourceVersion
		New:                   func() runtime.Object { return &rule{} },
		NewList:               func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
		Strategy: strategy.Typed[*rule]{
			PrepareCreate: func(r *rule) { r.Status = resourcev1.DeviceTaintRuleStatus{} },
			PrepareUpdate: func(r, old *rule) { r.Status = old.Status },
			ValidateNew: func(r *rule) field.ErrorList {
				errs := strategy.ValidateMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
				return declarativeLast(append(errs, validateTaintRuleSpec(&r.Spec, nil)...))
			},
			ValidateChange: func(r, old *rule) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
				return declarativeLast(append(errs, validateTaintRuleSpec(&r.Spec, &old.Spec)...))
			},
		},
		Status: strategy.TypedStatus[*rule]{
			PrepareUpdate: func(r, old *rule) {
				r.Spec = old.Spec
				strategy.ResetMetaForStatus(&r.ObjectMeta, &old.ObjectMeta)
			},
			ValidateChange: func(r, old *rule) field.ErrorList {
				p := strategy.StatusPath.Child("conditions")
				errs := strategy.ValidateMetaUpdate(&r.ObjectMeta, &old.ObjectMeta)
				errs = append(errs, metav1validation.ValidateConditions(r.Status.Conditions, p)...)
				if n := len(r.Status.Conditions); n > resourcev1.DeviceTaintRuleStatusMaxConditions {
					errs = append(errs, field.TooMany(p, n, resourcev1.DeviceTaintRuleStatusMaxConditions))
				}
				return errs
			},
		},
		Admit:           admitTaintTimes,
		Attrs:           strategy.Attrs(false, strategy.NamespaceField[*rule]),
		FieldLabelError: strategy.UnknownFieldLabel,
		Table:           printers.For(Group, "DeviceTaintRule"),
	}
}

func validateTaintRuleSpec(s, old *resourcev1.DeviceTaintRuleSpec) field.ErrorList {
	p := strategy.SpecPath
	var errs field.ErrorList
	if f := s.DeviceSelector; f != nil {
		fp := p.Child("deviceSelector")
		if f.Driver != nil {
			errs = append(errs, driverName(fp.Child("driver"), *f.Driver)...)
		}
		if f.Pool != nil {
			errs = append(errs, poolName(fp.Child("pool"), *f.Pool)...)
		}
		if f.Device != nil {
			errs = append(errs, strategy.Check(fp.Child("device"), *f.Device, validation.IsDNS1123Label)...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(errs, validateTaint(p.Child("taint"), &s.Taint, oldTaint)...)
}

// admitTaintTimes stamps the taints the write adds (or whose effect it
// changes) with the server's time, as kube-apiserver's defaulting does on
// create and its strategy on an update of the effect: device taint rules'
// spec.taint, resource slices' devices' taints.
func admitTaintTimes(_ context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Subresource != "" {
		return nil, nil
	}
	now := metav1.NewTime(env.Clock().Now().Truncate(1e9))
	switch o := a.Object.(type) {
	case *resourcev1.DeviceTaintRule:
		t := &o.Spec.Taint
		if t.TimeAdded == nil {
			t.TimeAdded = &now
		} else if old, ok := a.Old.(*resourcev1.DeviceTaintRule); ok && old.Spec.Taint.Effect != t.Effect &&
			old.Spec.Taint.TimeAdded != nil && t.TimeAdded.Equal(old.Spec.Taint.TimeAdded) {
			t.TimeAdded = &now
		}
	case *resourcev1.ResourceSlice:
		for i := range o.Spec.Devices {
			for j := range o.Spec.Devices[i].Taints {
				if t := &o.Spec.Devices[i].Taints[j]; t.TimeAdded == nil {
					t.TimeAdded = &now
				}
			}
		}
	}
	return nil, nil
}
