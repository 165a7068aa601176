package podsecurity

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Name is the plugin's name in kube-apiserver's admission chain.
const Name = "PodSecurity"

// AuditAnnotator records an audit annotation of the request ctx belongs
// to (key carries LabelPrefix).
type AuditAnnotator func(ctx context.Context, key, value string)

// Plugin is the PodSecurity admission plugin.
type Plugin struct {
	defaults   Policy
	exemptions Exemptions
	eval       *evaluator
	annotate   AuditAnnotator
	metrics    *metrics
	// maxPodsChecked and podCheckTimeout bound the check of a namespace's
	// pods against a new enforce level (3000 pods, 1 s, as Kubernetes).
	maxPodsChecked  int
	podCheckTimeout time.Duration
}

// Options are what the plugin reports to besides the client.
type Options struct {
	// Annotate receives the audit annotations of each request; nil drops
	// them.
	Annotate AuditAnnotator
	// Metrics is where the pod_security_* metrics are registered; nil
	// keeps them unregistered.
	Metrics prometheus.Registerer
}

// New returns the plugin of cfg (nil is the default configuration: every
// mode privileged:latest, nothing exempt).
func New(cfg *Config, opts Options) (*Plugin, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	c := *cfg
	c.setDefaults()
	if errs := c.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("PodSecurity invalid: %w", errs.ToAggregate())
	}
	eval := newEvaluator(allChecks())
	m, err := newMetrics(opts.Metrics, eval.max)
	if err != nil {
		return nil, err
	}
	return &Plugin{
		defaults: c.policy(), exemptions: c.Exemptions, eval: eval, annotate: opts.Annotate, metrics: m,
		maxPodsChecked: 3000, podCheckTimeout: time.Second,
	}, nil
}

// Name returns "PodSecurity".
func (p *Plugin) Name() string { return Name }

// outcome is what one evaluation decided: a refusal (nil admits), the
// warnings for the client and the audit annotations.
type outcome struct {
	err         error
	warnings    []string
	annotations map[string]string
}

// Validate checks a create or update of a pod, a namespace or a workload
// with a pod template, as kube-apiserver's PodSecurity validating
// admission plugin. It takes nothing, so its Txn is always nil.
func (p *Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	if a.Operation != registry.Create && a.Operation != registry.Update {
		return nil, nil
	}
	var o outcome
	switch obj := a.Object.(type) {
	case *corev1.Namespace:
		o = p.validateNamespace(ctx, env, a, obj)
	case *corev1.Pod:
		o = p.validatePod(ctx, env, a, obj)
	default:
		meta, spec, ok := podTemplate(a.Object)
		if !ok {
			return nil, nil
		}
		o = p.validateWorkload(ctx, env, a, meta, spec)
	}
	for _, w := range o.warnings {
		registry.AddWarning(ctx, w)
	}
	if p.annotate != nil {
		keys := make([]string, 0, len(o.annotations))
		for k := range o.annotations {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p.annotate(ctx, k, o.annotations[k])
		}
	}
	return nil, o.err
}

func exemption(reason string) outcome {
	return outcome{annotations: map[string]string{AnnotationExempt: reason}}
}

// user is the name of the requesting user.
func user(ctx context.Context, a *registry.Attributes) string {
	if a.User.Name != "" {
		return a.User.Name
	}
	return registry.UserFrom(ctx).Name
}

// objectName is the name of the object written (a generated name once
// generated).
func objectName(a *registry.Attributes, meta metav1.Object) string {
	if a.Name != "" {
		return a.Name
	}
	return meta.GetName()
}

var podsResource = schema.GroupResource{Resource: "pods"}

func (p *Plugin) validatePod(ctx context.Context, env registry.Env, a *registry.Attributes, pod *corev1.Pod) outcome {
	if ignoredPodSubresources[a.Subresource] {
		return outcome{}
	}
	r := requestOf(a, "pod")
	ns := pod.Namespace
	if ns == "" {
		ns = a.Namespace
	}
	if o, ok := p.exempt(ctx, a, ns, r); ok {
		return o
	}
	nsObj, err := namespace(ctx, env, ns)
	if err != nil {
		p.metrics.error(true, r)
		st := apierrors.NewInternalError(fmt.Errorf("failed to lookup namespace %q", ns))
		return outcome{err: st, annotations: map[string]string{AnnotationError: st.ErrStatus.Message + ": " + err.Error()}}
	}
	policy, errs := policyFor(nsObj.Labels, p.defaults)
	if len(errs) == 0 && policy.fullyPrivileged() {
		p.metrics.evaluation("allow", policy.Enforce, "enforce", r)
		return outcome{annotations: map[string]string{AnnotationEnforcePolicy: LevelVersion{Privileged, Latest}.String()}}
	}
	if a.Operation == registry.Update {
		if old, ok := a.Old.(*corev1.Pod); ok && !significantPodUpdate(pod, old) {
			return outcome{}
		}
	}
	return p.evaluate(r, policy, errs, &pod.ObjectMeta, &pod.Spec, func(err error) error {
		return apierrors.NewForbidden(podsResource, objectName(a, pod), err)
	})
}

// exempt reports whether the namespace or the user is exempt, counting
// the exemption, with the outcome that says so.
func (p *Plugin) exempt(ctx context.Context, a *registry.Attributes, ns string, r request) (outcome, bool) {
	if slices.Contains(p.exemptions.Namespaces, ns) {
		p.metrics.exemption(r)
		return exemption("namespace"), true
	}
	if u := user(ctx, a); u != "" && slices.Contains(p.exemptions.Usernames, u) {
		p.metrics.exemption(r)
		return exemption("user"), true
	}
	return outcome{}, false
}

func (p *Plugin) validateWorkload(ctx context.Context, env registry.Env, a *registry.Attributes, meta *metav1.ObjectMeta, spec *corev1.PodSpec) outcome {
	if a.Subresource != "" {
		return outcome{}
	}
	r := requestOf(a, "controller")
	ns := a.Namespace
	if o, ok := p.exempt(ctx, a, ns, r); ok {
		return o
	}
	nsObj, err := namespace(ctx, env, ns)
	if err != nil {
		p.metrics.error(true, r)
		return outcome{annotations: map[string]string{AnnotationError: fmt.Sprintf("failed to lookup namespace %q: %v", ns, err)}}
	}
	policy, errs := policyFor(nsObj.Labels, p.defaults)
	if len(errs) == 0 && policy.Warn.Level == Privileged && policy.Audit.Level == Privileged {
		return outcome{}
	}
	if meta == nil && spec == nil {
		return outcome{}
	}
	return p.evaluate(r, policy, errs, meta, spec, nil)
}

// evaluate checks a pod (or a pod template) against the namespace's
// policy: its enforce level when forbid is set (a pod; forbid words the
// refusal), its audit level (an annotation) and, unless refused, its warn
// level (a warning). errs are the errors of the namespace's labels.
func (p *Plugin) evaluate(r request, policy Policy, errs field.ErrorList, meta *metav1.ObjectMeta, spec *corev1.PodSpec, forbid func(error) error) outcome {
	if spec.RuntimeClassName != nil && *spec.RuntimeClassName != "" && slices.Contains(p.exemptions.RuntimeClasses, *spec.RuntimeClassName) {
		p.metrics.exemption(r)
		return exemption("runtimeClass")
	}
	o := outcome{annotations: map[string]string{}}
	if len(errs) > 0 {
		o.annotations[AnnotationError] = "Failed to parse policy: " + errs.ToAggregate().Error()
		p.metrics.error(false, r)
	}
	results := map[LevelVersion][]Violation{}
	run := func(lv LevelVersion) []Violation {
		r, ok := results[lv]
		if !ok {
			r = p.eval.evaluate(lv, meta, spec)
			results[lv] = r
		}
		return r
	}
	if forbid != nil {
		o.annotations[AnnotationEnforcePolicy] = policy.Enforce.String()
		if v := run(policy.Enforce); len(v) > 0 {
			o.err = forbid(fmt.Errorf("violates PodSecurity %q: %s", policy.Enforce.String(), details(v)))
			p.metrics.evaluation("deny", policy.Enforce, "enforce", r)
		} else {
			p.metrics.evaluation("allow", policy.Enforce, "enforce", r)
		}
	}
	if v := run(policy.Audit); len(v) > 0 {
		o.annotations[AnnotationAuditViolations] = fmt.Sprintf("would violate PodSecurity %q: %s", policy.Audit.String(), details(v))
		p.metrics.evaluation("deny", policy.Audit, "audit", r)
	}
	if o.err == nil {
		if v := run(policy.Warn); len(v) > 0 {
			o.warnings = append(o.warnings, fmt.Sprintf("would violate PodSecurity %q: %s", policy.Warn.String(), details(v)))
			p.metrics.evaluation("deny", policy.Warn, "warn", r)
		}
	}
	return o
}

var (
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
)

// namespace reads a namespace.
func namespace(ctx context.Context, env registry.Env, name string) (*corev1.Namespace, error) {
	objs := env.Objects(namespacesGVR)
	if objs == nil {
		return nil, fmt.Errorf("namespaces are not served")
	}
	obj, err := objs.Get(ctx, "", name)
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespace %q is a %T", name, obj)
	}
	return ns, nil
}

// Check returns the violations of a pod (its metadata and spec) at a
// level and version, in the order kube-apiserver reports them; none at
// privileged.
func (p *Plugin) Check(lv LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []Violation {
	return p.eval.evaluate(lv, meta, spec)
}

// Details words violations as a refusal or warning does: each reason with
// its detail in parentheses, joined by ", ".
func Details(vs []Violation) string { return details(vs) }
