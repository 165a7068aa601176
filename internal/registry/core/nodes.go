package core

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

func nodesResource() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Resource: "nodes", Kind: "Node", ListKind: "NodeList", Singular: "node",
		ShortNames:   []string{"no"},
		NoGeneration: true, // as kube-apiserver: no metadata.generation
		New:          func() runtime.Object { return &corev1.Node{} },
		NewList:      func() runtime.Object { return &corev1.NodeList{} },
		// Nodes keep the status they are created with: a kubelet
		// registers its node with its status.
		Strategy: strategy.Typed[*corev1.Node]{
			PrepareUpdate:  func(n, old *corev1.Node) { n.Status = old.Status },
			Defaults:       defaultNode,
			ValidateNew:    validateNode,
			ValidateChange: validateNodeUpdate,
		},
		Status: strategy.TypedStatus[*corev1.Node]{
			PrepareUpdate: func(n, old *corev1.Node) {
				n.Spec = old.Spec
				// metadata changes stay, as in kube-apiserver: its status
				// strategy for the kind resets the spec only
				defaultNodeStatus(&n.Status)
			},
			ValidateChange: func(n, old *corev1.Node) field.ErrorList {
				errs := strategy.ValidateMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)
				return append(errs, validateNodeStatus(&n.Status)...)
			},
		},
		Subresources: []registry.Subresource{nodeProxySubresource()},
		Attrs: strategy.Attrs(false, func(n *corev1.Node, set fields.Set) {
			set["spec.unschedulable"] = strconv.FormatBool(n.Spec.Unschedulable)
		}),
		Table: printers.For("", "Node"),
	}
}

// defaultNode keeps spec.podCIDR and spec.podCIDRs in step, as the v1
// conversion does (podCIDR wins when they differ), and defaults the status.
func defaultNode(n *corev1.Node) {
	s := &n.Spec
	switch {
	case s.PodCIDR != "" && (len(s.PodCIDRs) == 0 || s.PodCIDRs[0] != s.PodCIDR):
		s.PodCIDRs = []string{s.PodCIDR}
	case s.PodCIDR == "" && len(s.PodCIDRs) > 0:
		s.PodCIDR = s.PodCIDRs[0]
	}
	defaultNodeStatus(&n.Status)
}

// defaultNodeStatus rounds resource quantities and defaults allocatable to
// capacity.
func defaultNodeStatus(s *corev1.NodeStatus) {
	if s.Allocatable == nil && s.Capacity != nil {
		s.Allocatable = s.Capacity.DeepCopy()
	}
	podspec.RoundResources(s.Capacity)
	podspec.RoundResources(s.Allocatable)
}

func validateNode(n *corev1.Node) field.ErrorList {
	errs := strategy.ValidateMeta(&n.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
	errs = append(errs, validateNodeSpec(&n.Spec)...)
	return append(errs, validateNodeStatus(&n.Status)...)
}

func validateNodeSpec(s *corev1.NodeSpec) field.ErrorList {
	var errs field.ErrorList
	for i, c := range s.PodCIDRs {
		errs = append(errs, validation.IsValidCIDR(strategy.SpecPath.Child("podCIDRs").Index(i), c)...)
	}
	if len(s.PodCIDRs) > 2 {
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("podCIDRs"), s.PodCIDRs, "may specify no more than one CIDR for each IP family"))
	}
	// kube-apiserver reports the taints under metadata (its validation
	// names them so); the messages keep that path.
	return append(errs, validateTaints(s.Taints, strategy.MetadataPath.Child("taints"))...)
}

// validateTaints checks keys, values and effects, and that no key/effect
// pair repeats (the duplicate shown whole, in the internal form, as
// kube-apiserver shows it).
func validateTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range taints {
		idx := p.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, idx.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		errs = append(errs, strategy.ValidateEnum(idx.Child("effect"), t.Effect, podspec.TaintEffects...)...)
		k := t.Key + "\x00" + string(t.Effect)
		if seen.Has(k) {
			dup := field.Duplicate(idx, strategy.GoNamed{V: t})
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		seen.Insert(k)
	}
	return errs
}

var nodeAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeInternalDNS, corev1.NodeExternalDNS,
}

func validateNodeStatus(s *corev1.NodeStatus) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"capacity", s.Capacity}, {"allocatable", s.Allocatable}} {
		for _, name := range strategy.SortedKeys(l.list) {
			q := l.list[name]
			p := sp.Child(l.name, string(name)) // status.capacity.cpu, as kube-apiserver names it
			errs = append(errs, podspec.ValidateResourceName(name, p)...)
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for i, a := range s.Addresses {
		errs = append(errs, strategy.ValidateEnum(sp.Child("addresses").Index(i).Child("type"), a.Type, nodeAddressTypes...)...)
	}
	return errs
}

// validateNodeUpdate lets podCIDRs and providerID be set once, never
// changed.
func validateNodeUpdate(n, old *corev1.Node) field.ErrorList {
	errs := strategy.ValidateMetaUpdate(&n.ObjectMeta, &old.ObjectMeta)
	errs = append(errs, validateNodeSpec(&n.Spec)...)
	if len(old.Spec.PodCIDRs) > 0 && !apiequality.Semantic.DeepEqual(n.Spec.PodCIDRs, old.Spec.PodCIDRs) {
		errs = append(errs, field.Forbidden(strategy.SpecPath.Child("podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if o := old.Spec.ProviderID; o != "" && n.Spec.ProviderID != o {
		// As kube-apiserver's declarative validation words it.
		msg := "field cannot be modified once set"
		if n.Spec.ProviderID == "" {
			msg = "field cannot be cleared once set"
		}
		errs = append(errs, field.Invalid(strategy.SpecPath.Child("providerID"), nil, msg))
	}
	return errs
}
