package podspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodSpec checks a (defaulted) pod spec; pod is the pod's name
// ("" for a template: the claims of its ephemeral volumes have no names
// yet) and p the spec's path ("spec" for pods, "spec.template.spec" for
// templates).
func ValidatePodSpec(s *corev1.PodSpec, pod string, p *field.Path) field.ErrorList {
	vols, errs := validateVolumes(s.Volumes, pod, p.Child("volumes"))
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := sets.New[string]()
	for i := range s.InitContainers {
		errs = append(errs, validateContainer(&s.InitContainers[i], true, names, vols, p.Child("initContainers").Index(i))...)
	}
	for i := range s.Containers {
		errs = append(errs, validateContainer(&s.Containers[i], false, names, vols, p.Child("containers").Index(i))...)
	}
	errs = append(errs, strategy.ValidateEnum(p.Child("restartPolicy"), s.RestartPolicy,
		corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)...)
	errs = append(errs, strategy.ValidateEnum(p.Child("dnsPolicy"), s.DNSPolicy,
		corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)...)
	if s.DNSPolicy == corev1.DNSNone && (s.DNSConfig == nil || len(s.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(p.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when `dnsPolicy` is None"))
	}
	if a := s.ActiveDeadlineSeconds; a != nil && *a < 1 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *a, validation.InclusiveRangeError(1, 1<<31-1)))
	}
	errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, strategy.ValidateName(p.Child("serviceAccountName"), s.ServiceAccountName, validation.IsDNS1123Subdomain)...)
	errs = append(errs, strategy.ValidateName(p.Child("nodeName"), s.NodeName, validation.IsDNS1123Subdomain)...)
	errs = append(errs, strategy.ValidateName(p.Child("hostname"), s.Hostname, validation.IsDNS1123Label)...)
	errs = append(errs, strategy.ValidateName(p.Child("subdomain"), s.Subdomain, validation.IsDNS1123Label)...)
	errs = append(errs, ValidateTolerations(s.Tolerations, p.Child("tolerations"))...)
	errs = append(errs, validateSysctls(s, p.Child("securityContext", "sysctls"))...)
	return errs
}

// validateVolumes checks the pod's volumes in kube-apiserver's order: the
// source, then the name. It returns the names of the valid volumes only,
// so that a mount of an invalid one is refused too, as kube-apiserver
// refuses it. A pod (pod is its name) may not mount, as a claim, one of
// the claims its ephemeral volumes make.
func validateVolumes(vols []corev1.Volume, pod string, p *field.Path) (sets.Set[string], field.ErrorList) {
	names := sets.New[string]()
	made := ephemeralClaims(vols, pod)
	var errs field.ErrorList
	for i := range vols {
		v, idx := &vols[i], p.Index(i)
		el := validateVolumeSource(v, pod, idx)
		np := idx.Child("name")
		if v.Name == "" {
			el = append(el, field.Required(np, ""))
		} else {
			el = append(el, strategy.ValidateName(np, v.Name, validation.IsDNS1123Label)...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(np, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
		}
		errs = append(errs, el...)
		if c := v.PersistentVolumeClaim; c != nil && made.Has(c.ClaimName) {
			errs = append(errs, field.Invalid(idx.Child("persistentVolumeClaim", "claimName"), c.ClaimName,
				"must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return names, errs
}

// ephemeralClaims are the names of the claims a pod's ephemeral volumes
// make (<pod>-<volume>); none for a template.
func ephemeralClaims(vols []corev1.Volume, pod string) sets.Set[string] {
	made := sets.New[string]()
	if pod == "" {
		return made
	}
	for i := range vols {
		if vols[i].Ephemeral != nil {
			made.Insert(pod + "-" + vols[i].Name)
		}
	}
	return made
}

func validateContainer(c *corev1.Container, init bool, names, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case names.Has(c.Name):
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	default:
		errs = append(errs, strategy.ValidateName(p.Child("name"), c.Name, validation.IsDNS1123Label)...)
	}
	names.Insert(c.Name)
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, strategy.ValidateEnum(p.Child("imagePullPolicy"), c.ImagePullPolicy,
		corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent)...)
	errs = append(errs, strategy.ValidateEnum(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	if init && c.RestartPolicy != nil {
		errs = append(errs, strategy.ValidateEnum(p.Child("restartPolicy"), *c.RestartPolicy, corev1.ContainerRestartPolicyAlways)...)
	}
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	for i, e := range c.Env {
		np := p.Child("env").Index(i).Child("name")
		if e.Name == "" {
			errs = append(errs, field.Required(np, ""))
		}
		errs = append(errs, strategy.ValidateName(np, e.Name, validation.IsRelaxedEnvVarName)...)
	}
	errs = append(errs, ValidateResources(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, vols, p.Child("volumeMounts"))...)
	errs = append(errs, validateProbe(c.LivenessProbe, true, p.Child("livenessProbe"))...)
	errs = append(errs, validateProbe(c.ReadinessProbe, false, p.Child("readinessProbe"))...)
	errs = append(errs, validateProbe(c.StartupProbe, true, p.Child("startupProbe"))...)
	return errs
}

// Protocols are the protocols a port may name.
var Protocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

func validateContainerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		idx := p.Index(i)
		if port.Name != "" {
			errs = append(errs, strategy.ValidateName(idx.Child("name"), port.Name, validation.IsValidPortName)...)
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(idx.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(idx.Child("containerPort"), ""))
		}
		errs = append(errs, ValidatePortNum(idx.Child("containerPort"), port.ContainerPort)...)
		if port.HostPort != 0 {
			errs = append(errs, ValidatePortNum(idx.Child("hostPort"), port.HostPort)...)
		}
		errs = append(errs, strategy.ValidateEnum(idx.Child("protocol"), port.Protocol, Protocols...)...)
	}
	return errs
}

// ValidatePortNum checks a non-zero port number is in 1-65535.
func ValidatePortNum(p *field.Path, port int32) field.ErrorList {
	if port == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		errs = append(errs, field.Invalid(p, port, msg))
	}
	return errs
}

func validateVolumeMounts(mounts []corev1.VolumeMount, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		idx := p.Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(idx.Child("name"), ""))
		case !vols.Has(m.Name):
			errs = append(errs, field.NotFound(idx.Child("name"), m.Name))
		}
		switch {
		case m.MountPath == "":
			errs = append(errs, field.Required(idx.Child("mountPath"), ""))
		case paths.Has(m.MountPath):
			errs = append(errs, field.Invalid(idx.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
	}
	return errs
}

// validateProbe checks that a probe has exactly one handler and sane
// thresholds; liveness and startup probes must have successThreshold 1.
func validateProbe(pr *corev1.Probe, successMustBeOne bool, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	for _, set := range []bool{pr.Exec != nil, pr.HTTPGet != nil, pr.TCPSocket != nil, pr.GRPC != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	for name, v := range map[string]int32{
		"initialDelaySeconds": pr.InitialDelaySeconds, "timeoutSeconds": pr.TimeoutSeconds,
		"periodSeconds": pr.PeriodSeconds, "successThreshold": pr.SuccessThreshold,
		"failureThreshold": pr.FailureThreshold,
	} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(v), p.Child(name))...)
	}
	if successMustBeOne && pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	if h := pr.HTTPGet; h != nil {
		errs = append(errs, ValidatePortOrName(p.Child("httpGet", "port"), h.Port.IntVal, h.Port.StrVal)...)
	}
	if t := pr.TCPSocket; t != nil {
		errs = append(errs, ValidatePortOrName(p.Child("tcpSocket", "port"), t.Port.IntVal, t.Port.StrVal)...)
	}
	slices.SortFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// ValidatePortOrName checks an int-or-string port: a number in 1-65535 or
// a valid port name.
func ValidatePortOrName(p *field.Path, num int32, name string) field.ErrorList {
	if name != "" {
		return strategy.ValidateName(p, name, validation.IsValidPortName)
	}
	if num == 0 {
		return field.ErrorList{field.Invalid(p, num, validation.InclusiveRangeError(1, 65535))}
	}
	return ValidatePortNum(p, num)
}

// ValidateResources checks quantities are non-negative, requests do not
// exceed limits, and resources that cannot be overcommitted (extended
// resources) have equal requests and limits.
func ValidateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range strategy.SortedKeys(r.Limits) {
		lp := p.Child("limits").Key(string(name))
		errs = append(errs, ValidateResourceName(name, lp)...)
		if q := r.Limits[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(lp, q.String(), "must be greater than or equal to 0"))
		}
	}
	// A request that does not fit its limit is reported on requests (and a
	// missing limit on limits), not on the resource's key: kube-apiserver's
	// field paths.
	for _, name := range strategy.SortedKeys(r.Requests) {
		rp := p.Child("requests").Key(string(name))
		errs = append(errs, ValidateResourceName(name, rp)...)
		q := r.Requests[name]
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(rp, q.String(), "must be greater than or equal to 0"))
		}
		l, hasLimit := r.Limits[name]
		switch {
		case !IsNativeResource(name) && !hasLimit:
			errs = append(errs, field.Required(p.Child("limits"), "Limit must be set for non overcommitable resources"))
		case !IsNativeResource(name) && q.Cmp(l) != 0:
			errs = append(errs, field.Invalid(p.Child("requests"), q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, l.String())))
		case hasLimit && q.Cmp(l) > 0:
			errs = append(errs, field.Invalid(p.Child("requests"), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, l.String())))
		}
	}
	return errs
}

func ValidateResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// IsNativeResource reports whether a resource name belongs to Kubernetes
// (no domain, or a kubernetes.io domain) rather than being extended.
func IsNativeResource(name corev1.ResourceName) bool {
	s := string(name)
	return !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
}

// ValidateTolerations checks keys, operators, values and effects of
// tolerations.
func ValidateTolerations(tols []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tols {
		idx := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		} else if t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(idx.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(idx.Child("effect"), t.Effect,
				"effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			errs = append(errs, strategy.ValidateName(idx.Child("value"), t.Value, validation.IsValidLabelValue)...)
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(idx.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(idx.Child("operator"), t.Operator, []string{"Equal", "Exists"}))
		}
		if t.Effect != "" {
			errs = append(errs, strategy.ValidateEnum(idx.Child("effect"), t.Effect, TaintEffects...)...)
		}
	}
	return errs
}

// TaintEffects are the effects a taint or toleration may name.
var TaintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// ValidatePodTemplate checks a pod template: its labels and annotations
// (reported as <p>.labels and <p>.annotations, without "metadata", as
// kube-apiserver reports them) and its spec.
func ValidatePodTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, p.Child("annotations"))...)
	return append(errs, ValidatePodSpec(&t.Spec, "", p.Child("spec"))...)
}
