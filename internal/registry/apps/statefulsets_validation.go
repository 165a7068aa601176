package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// stsSpecOptions are the relaxations kube-apiserver applies on update.
type stsSpecOptions struct {
	// skipTemplate: the old spec was already invalid, so the pod
	// template is not checked again.
	skipTemplate bool
	// update: the service name and the claim templates are immutable and
	// not checked again.
	update bool
}

func validateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	errs := strategy.ValidateMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel)
	return append(errs, validateStatefulSetSpec(&s.Spec, strategy.SpecPath, stsSpecOptions{})...)
}

func validateStatefulSetSpec(s *appsv1.StatefulSetSpec, p *field.Path, opts stsSpecOptions) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), s.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	errs = append(errs, validateStatefulSetStrategy(&s.UpdateStrategy, p.Child("updateStrategy"))...)
	if rp := s.PersistentVolumeClaimRetentionPolicy; rp != nil {
		rpp := p.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, validateRetentionPolicyType(rp.WhenDeleted, rpp.Child("whenDeleted"))...)
		errs = append(errs, validateRetentionPolicyType(rp.WhenScaled, rpp.Child("whenScaled"))...)
	}
	if !opts.update {
		// every template as kube-apiserver checks a new claim's spec (data sources too)
		for i := range s.VolumeClaimTemplates {
			errs = append(errs, podspec.ValidateClaimSpec(&s.VolumeClaimTemplates[i].Spec, p.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	errs = append(errs, strategy.ValidateNonNegative(p.Child("replicas"), s.Replicas)...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.Ordinals.Start), p.Child("ordinals.start"))...)
	}
	if !opts.update && s.ServiceName != "" {
		errs = append(errs, strategy.ValidateName(p.Child("serviceName"), s.ServiceName, validation.IsDNS1123Label)...)
	}
	errs = append(errs, validateStatefulSetTemplate(s, p, opts)...)
	return errs
}

func validateStatefulSetStrategy(s *appsv1.StatefulSetUpdateStrategy, p *field.Path) field.ErrorList {
	onlyRolling := fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)
	switch s.Type {
	case "":
		return field.ErrorList{field.Required(p, "")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(p.Child("rollingUpdate"), internalRollingUpdate(s.RollingUpdate), onlyRolling)}
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.RollingUpdate; ru != nil {
			rp := p.Child("rollingUpdate")
			errs := strategy.ValidateNonNegative(rp.Child("partition"), ru.Partition)
			if mu := ru.MaxUnavailable; mu != nil {
				mp := rp.Child("maxUnavailable")
				errs = append(errs, strategy.ValidateIntOrPercent(mu, mp)...)
				if intOrPercentValue(mu) == 0 {
					errs = append(errs, field.Invalid(mp, mu, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(mu, mp)...)
			}
			return errs
		}
	default:
		return field.ErrorList{field.Invalid(p, internalStatefulSetStrategy(s),
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType))}
	}
	return nil
}

func validateRetentionPolicyType(t appsv1.PersistentVolumeClaimRetentionPolicyType, p *field.Path) field.ErrorList {
	switch t {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, t, []string{
		string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}

// validateStatefulSetTemplate checks the selector and the pod template. The
// template is checked without hostname and subdomain (the controller sets
// them) and with a volume for each claim template, which its containers
// may mount.
func validateStatefulSetTemplate(s *appsv1.StatefulSetSpec, p *field.Path, opts stsSpecOptions) field.ErrorList {
	var errs field.ErrorList
	sp, tp := p.Child("selector"), p.Child("template")
	if s.Selector == nil {
		errs = append(errs, field.Required(sp, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, sp)...)
		if len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(sp, s.Selector, "empty selector is invalid for statefulset"))
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(s.Selector)
	if err != nil {
		errs = append(errs, field.Invalid(sp, s.Selector, ""))
	} else {
		t := statefulSetTemplateToValidate(s)
		if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
			errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
		}
		if !opts.skipTemplate {
			errs = append(errs, podspec.ValidatePodTemplate(t, tp)...)
		} else {
			// Checked again even when the template is not (the same
			// errors are reported once).
			errs = append(errs, metav1validation.ValidateLabels(t.Labels, tp.Child("labels"))...)
			errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, tp.Child("annotations"))...)
		}
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in StatefulSet is not Supported"))
	}
	return errs
}

func statefulSetTemplateToValidate(s *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	t := &s.Template
	if t.Spec.Subdomain == "" && t.Spec.Hostname == "" && len(s.VolumeClaimTemplates) == 0 {
		return t
	}
	t = t.DeepCopy()
	t.Spec.Subdomain, t.Spec.Hostname = "", ""
	if len(s.VolumeClaimTemplates) == 0 {
		return t
	}
	claims := map[string]bool{}
	var vols []corev1.Volume
	for _, c := range s.VolumeClaimTemplates {
		if !claims[c.Name] {
			claims[c.Name] = true
			vols = append(vols, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
		}
	}
	for _, v := range t.Spec.Volumes {
		if !claims[v.Name] {
			vols = append(vols, v)
		}
	}
	t.Spec.Volumes = vols
	return t
}

// validateStatefulSetUpdate: besides the spec rules, the selector, the
// claim templates, the service name and the pod management policy are
// immutable.
func validateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	opts := stsSpecOptions{update: true}
	if len(validateStatefulSetSpec(&old.Spec, nil, opts)) > 0 {
		opts.skipTemplate = true
	}
	sp := strategy.SpecPath
	errs = append(errs, validateStatefulSetSpec(&s.Spec, sp, opts)...)
	errs = append(errs, apivalidation.ValidateImmutableField(s.Spec.Selector, old.Spec.Selector, sp.Child("selector"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(claimTemplates(s), claimTemplates(old), sp.Child("volumeClaimTemplates"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(s.Spec.ServiceName, old.Spec.ServiceName, sp.Child("serviceName"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(s.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, sp.Child("podManagementPolicy"))...)
	return errs
}

func validateStatefulSetStatusUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	st, p := &s.Status, strategy.StatusPath
	var errs field.ErrorList
	for _, c := range []struct {
		name string
		v    int32
	}{{"replicas", st.Replicas}, {"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.v), p.Child(c.name))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(st.ObservedGeneration, p.Child("observedGeneration"))...)
	errs = append(errs, strategy.ValidateNonNegative(p.Child("collisionCount"), st.CollisionCount)...)
	const overReplicas = "cannot be greater than status.replicas"
	for _, c := range []struct {
		name string
		v    int32
	}{{"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		if c.v > st.Replicas {
			errs = append(errs, field.Invalid(p.Child(c.name), c.v, overReplicas))
		}
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	errs = append(errs, strategy.ValidateMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)...)
	return append(errs, collisionCountDecrement(st.CollisionCount, old.Status.CollisionCount)...)
}

// collisionCountDecrement refuses a collision count lower than before.
func collisionCountDecrement(cur, old *int32) field.ErrorList {
	if old == nil || (cur != nil && *cur >= *old) {
		return nil
	}
	v := int32(0)
	if cur != nil {
		v = *cur
	}
	return field.ErrorList{field.Invalid(strategy.StatusPath.Child("collisionCount"), v, "cannot be decremented")}
}

// claimTemplates returns the claim templates as kube-apiserver compares
// them: without apiVersion and kind, which its internal form lacks.
func claimTemplates(s *appsv1.StatefulSet) []corev1.PersistentVolumeClaim {
	if s.Spec.VolumeClaimTemplates == nil {
		return nil
	}
	out := make([]corev1.PersistentVolumeClaim, len(s.Spec.VolumeClaimTemplates))
	for i, c := range s.Spec.VolumeClaimTemplates {
		c.TypeMeta = metav1.TypeMeta{}
		out[i] = c
	}
	return out
}
