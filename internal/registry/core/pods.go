package core

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/printers"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/podspec"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func podsResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "pods", Kind: "Pod", ListKind: "PodList", Singular: "pod",
		ShortNames: []string{"po"}, Categories: []string{"all"}, Namespaced: true,
		New:     func() runtime.Object { return &corev1.Pod{} },
		NewList: func() runtime.Object { return &corev1.PodList{} },
		Strategy: podStrategy{strategy.Typed[*corev1.Pod]{
			PrepareCreate:  preparePodCreate,
			PrepareUpdate:  preparePodUpdate,
			Defaults:       podspec.DefaultPod,
			ValidateNew:    validatePod,
			ValidateChange: validatePodUpdate,
			Warn:           podWarnings,
		}},
		Status: strategy.TypedStatus[*corev1.Pod]{
			PrepareUpdate:  preparePodStatusUpdate,
			ValidateChange: validatePodStatusUpdate,
		},
		Subresources:        podSubresources(),
		Admit:               admitPod, // resize.go
		Quota:               podQuota{},
		ReturnDeletedObject: true,
		Attrs:               strategy.Attrs(true, podFields),
		TriggerFields:       []string{"spec.nodeName"},
		Table:               printers.For("", "Pod"),
	}
}

// podSubresources are the pods subresources besides status, by name.
func podSubresources() []registry.Subresource {
	subs := append([]registry.Subresource{bindingSubresource(), evictionSubresource(),
		ephemeralContainersSubresource(), resizeSubresource()}, podConnectSubresources()...)
	slices.SortFunc(subs, func(a, b registry.Subresource) int { return strings.Compare(a.Name, b.Name) })
	return subs
}

// podStrategy adds graceful deletion to the pod hooks.
type podStrategy struct{ strategy.Typed[*corev1.Pod] }

// GracePeriod implements registry.GracefulDeleteStrategy as Kubernetes
// does: the requested period, else spec.terminationGracePeriodSeconds;
// zero (immediate) for pods never scheduled or already terminated; a
// negative period becomes 1.
func (podStrategy) GracePeriod(obj runtime.Object, requested *int64) int64 {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	var period int64
	switch {
	case requested != nil:
		period = *requested
	case p.Spec.TerminationGracePeriodSeconds != nil:
		period = *p.Spec.TerminationGracePeriodSeconds
	}
	if p.Spec.NodeName == "" || isPodTerminal(p.Status.Phase) {
		return 0
	}
	if period < 0 {
		return 1
	}
	return period
}

func isPodTerminal(phase corev1.PodPhase) bool {
	return phase == corev1.PodSucceeded || phase == corev1.PodFailed
}

// preparePodCreate drops the fields of gates that are off and resets the
// status to Pending with the pod's QoS class; a pod created with
// scheduling gates says why it waits, as kube-apiserver's pod strategy
// writes it (PodScheduled=False, reason SchedulingGated).
func preparePodCreate(p *corev1.Pod) {
	podspec.SyncServiceAccount(&p.Spec) // after admission named the ServiceAccount
	podspec.DropDisabledFields(&p.Spec, nil)
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: podspec.QOS(&p.Spec)}
	if len(p.Spec.SchedulingGates) > 0 {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonSchedulingGated, Message: "Scheduling is blocked due to non-empty scheduling gates",
			LastTransitionTime: metav1.Now()}}
	}
}

// preparePodUpdate keeps the status and drops the fields of gates that
// are off.
func preparePodUpdate(p, old *corev1.Pod) {
	p.Status = old.Status
	podspec.DropDisabledFields(&p.Spec, &old.Spec)
}

// preparePodStatusUpdate keeps everything of old but status. The QoS class
// is fixed at creation: an update that drops it gets old's back.
func preparePodStatusUpdate(p, old *corev1.Pod) {
	p.Spec = old.Spec
	strategy.ResetMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
	if p.Status.QOSClass == "" {
		p.Status.QOSClass = old.Status.QOSClass
	}
}

func podFields(p *corev1.Pod, set fields.Set) {
	set["spec.nodeName"] = p.Spec.NodeName
	set["spec.restartPolicy"] = string(p.Spec.RestartPolicy)
	set["spec.schedulerName"] = p.Spec.SchedulerName
	set["spec.serviceAccountName"] = p.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(p.Spec.HostNetwork)
	set["status.phase"] = string(p.Status.Phase)
	set["status.podIP"] = podIP(&p.Status)
	set["status.nominatedNodeName"] = p.Status.NominatedNodeName
	// As kube-apiserver: spec.host is the old name of spec.nodeName, and
	// status.podIPs is an accepted label with no value (it selects only
	// with "").
	set["spec.host"] = p.Spec.NodeName
	set["status.podIPs"] = ""
}

// podIP is the primary pod IP: status.podIP, else the first of podIPs.
func podIP(s *corev1.PodStatus) string {
	if s.PodIP == "" && len(s.PodIPs) > 0 {
		return s.PodIPs[0].IP
	}
	return s.PodIP
}

func validatePod(p *corev1.Pod) field.ErrorList {
	errs := strategy.ValidateMeta(&p.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
	return append(errs, podspec.ValidatePodSpec(&p.Spec, p.Name, strategy.SpecPath)...)
}

// podUpdatableFields is the message of a forbidden pod spec change.
const podUpdatableFields = "pod updates may not change fields other than `spec.containers[*].image`," +
	"`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations)," +
	"`spec.schedulingGates` (only removals)"

// validatePodUpdate allows only the spec changes Kubernetes allows: images,
// a shorter activeDeadlineSeconds, added tolerations, removed scheduling
// gates.
func validatePodUpdate(p, old *corev1.Pod) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, podspec.ValidatePodSpec(&p.Spec, p.Name, strategy.SpecPath)...)
	s, o := &p.Spec, &old.Spec
	adp := strategy.SpecPath.Child("activeDeadlineSeconds")
	switch {
	case s.ActiveDeadlineSeconds == nil && o.ActiveDeadlineSeconds != nil:
		errs = append(errs, field.Invalid(adp, s.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	case s.ActiveDeadlineSeconds != nil && o.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds > *o.ActiveDeadlineSeconds:
		errs = append(errs, field.Invalid(adp, *s.ActiveDeadlineSeconds, "must be less than or equal to previous value"))
	}
	errs = append(errs, validateTolerationsUpdate(s.Tolerations, o.Tolerations, strategy.SpecPath.Child("tolerations"))...)
	errs = append(errs, validateGatesUpdate(s.SchedulingGates, o.SchedulingGates, strategy.SpecPath.Child("schedulingGates"))...)

	munged := s.DeepCopy()
	for i := range min(len(munged.Containers), len(o.Containers)) {
		munged.Containers[i].Image = o.Containers[i].Image
	}
	for i := range min(len(munged.InitContainers), len(o.InitContainers)) {
		munged.InitContainers[i].Image = o.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = o.ActiveDeadlineSeconds
	munged.Tolerations = o.Tolerations
	munged.SchedulingGates = o.SchedulingGates
	if !apiequality.Semantic.DeepEqual(munged, o) {
		errs = append(errs, field.Forbidden(strategy.SpecPath, podUpdatableFields))
	}
	return errs
}

// validateTolerationsUpdate requires every old toleration to remain (its
// tolerationSeconds may change).
func validateTolerationsUpdate(tols, old []corev1.Toleration, p *field.Path) field.ErrorList {
	for _, o := range old {
		kept := false
		for _, t := range tols {
			if t.Key == o.Key && t.Operator == o.Operator && t.Value == o.Value && t.Effect == o.Effect {
				kept = true
				break
			}
		}
		if !kept {
			return field.ErrorList{field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return nil
}

// validateGatesUpdate allows scheduling gates to be removed, not added.
func validateGatesUpdate(gates, old []corev1.PodSchedulingGate, p *field.Path) field.ErrorList {
	had := sets.New[string]()
	for _, g := range old {
		had.Insert(g.Name)
	}
	for i, g := range gates {
		if !had.Has(g.Name) {
			return field.ErrorList{field.Forbidden(p.Index(i), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name))}
		}
	}
	return nil
}

// validatePodStatusUpdate checks a status written through pods/status: no
// way back from a terminal phase (any other phase is accepted, unknown
// ones too, as kube-apiserver), valid IPs and names, non-negative restart
// counts.
func validatePodStatusUpdate(p, old *corev1.Pod) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&p.ObjectMeta, &old.ObjectMeta)
	sp := field.NewPath("status")
	if isPodTerminal(old.Status.Phase) && p.Status.Phase != old.Status.Phase {
		errs = append(errs, field.Forbidden(sp.Child("phase"),
			fmt.Sprintf("cannot transition from terminal phase %s to %s", old.Status.Phase, p.Status.Phase)))
	}
	errs = append(errs, strategy.ValidateName(sp.Child("nominatedNodeName"), p.Status.NominatedNodeName, validation.IsDNS1123Subdomain)...)
	ips := make([]string, len(p.Status.PodIPs))
	for i, ip := range p.Status.PodIPs {
		ips[i] = ip.IP
	}
	errs = append(errs, strategy.ValidateIPList(sp.Child("podIPs"), ips, "ip")...)
	if p.Status.PodIP != "" && len(ips) > 0 && ips[0] != p.Status.PodIP {
		errs = append(errs, field.Invalid(sp.Child("podIPs").Index(0).Child("ip"), ips[0], "must match `podIP`"))
	}
	if p.Status.PodIP != "" {
		errs = append(errs, strategy.ValidateIP(sp.Child("podIP"), p.Status.PodIP)...)
	}
	for _, cs := range []struct {
		name     string
		statuses []corev1.ContainerStatus
	}{{"initContainerStatuses", p.Status.InitContainerStatuses}, {"containerStatuses", p.Status.ContainerStatuses}} {
		for i, c := range cs.statuses {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(c.RestartCount), sp.Child(cs.name).Index(i).Child("restartCount"))...)
		}
	}
	return errs
}
