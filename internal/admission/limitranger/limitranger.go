package limitranger

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Annotation records the defaults set in a pod.
const Annotation = "kubernetes.io/limit-ranger"

// DefaultPod sets the containers' missing limits and requests from the
// Container items' default and defaultRequest of each range, and records
// what it set in the pod's annotation.
func DefaultPod(pod *corev1.Pod, ranges []*corev1.LimitRange) {
	for _, lr := range ranges {
		def := containerDefaults(lr)
		if len(def.Limits) == 0 && len(def.Requests) == 0 {
			continue
		}
		var notes []string
		for i := range pod.Spec.Containers {
			notes = mergeContainer(&pod.Spec.Containers[i], def, "container", notes)
		}
		for i := range pod.Spec.InitContainers {
			notes = mergeContainer(&pod.Spec.InitContainers[i], def, "init container", notes)
		}
		if len(notes) > 0 {
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
		}
	}
}

// containerDefaults are the Container items' default limits and requests.
func containerDefaults(lr *corev1.LimitRange) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.Default {
			out.Limits[k] = v.DeepCopy()
		}
		for k, v := range item.DefaultRequest {
			out.Requests[k] = v.DeepCopy()
		}
	}
	return out
}

// mergeContainer sets what the container lacks and notes it ("cpu,
// memory request for container app").
func mergeContainer(c *corev1.Container, def corev1.ResourceRequirements, kind string, notes []string) []string {
	var setLimits, setRequests []string
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	for k, v := range def.Limits {
		if _, ok := c.Resources.Limits[k]; !ok {
			c.Resources.Limits[k] = v.DeepCopy()
			setLimits = append(setLimits, string(k))
		}
	}
	for k, v := range def.Requests {
		if _, ok := c.Resources.Requests[k]; !ok {
			c.Resources.Requests[k] = v.DeepCopy()
			setRequests = append(setRequests, string(k))
		}
	}
	if len(setRequests) > 0 {
		sort.Strings(setRequests)
		notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), kind, c.Name))
	}
	if len(setLimits) > 0 {
		sort.Strings(setLimits)
		notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), kind, c.Name))
	}
	return notes
}

// ValidatePod checks the pod against the Container and Pod items of every
// range; nil when it fits.
func ValidatePod(pod *corev1.Pod, ranges []*corev1.LimitRange, podRequests, podLimits corev1.ResourceList) error {
	var errs []error
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			switch item.Type {
			case corev1.LimitTypeContainer:
				for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
					for i := range cs {
						errs = append(errs, checkItem(item, cs[i].Resources.Requests, cs[i].Resources.Limits)...)
					}
				}
			case corev1.LimitTypePod:
				errs = append(errs, checkItem(item, podRequests, podLimits)...)
			}
		}
	}
	return aggregate(errs)
}

// ValidateClaim checks a claim's storage request against the
// PersistentVolumeClaim items' min and max.
func ValidateClaim(pvc *corev1.PersistentVolumeClaim, ranges []*corev1.LimitRange) error {
	var errs []error
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypePersistentVolumeClaim {
				continue
			}
			typ := string(item.Type)
			for _, k := range sortedNames(item.Min) {
				if err := minConstraint(typ, k, item.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}); err != nil {
					errs = append(errs, err)
				}
			}
			for _, k := range sortedNames(item.Max) {
				if err := maxRequestConstraint(typ, k, item.Max[k], pvc.Spec.Resources.Requests); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return aggregate(errs)
}

// checkItem applies one item's min, max and ratio to requests and limits.
func checkItem(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	var errs []error
	typ := string(item.Type)
	for _, k := range sortedNames(item.Min) {
		if err := minConstraint(typ, k, item.Min[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.Max) {
		if err := maxConstraint(typ, k, item.Max[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range sortedNames(item.MaxLimitRequestRatio) {
		if err := ratioConstraint(typ, k, item.MaxLimitRequestRatio[k], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// values compares in milli-units when nothing overflows, else in units.
func values(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(typ string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := values(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(typ string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := values(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, typ, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, typ, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func maxRequestConstraint(typ string, name corev1.ResourceName, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[name]
	r, _, e := values(req, resource.Quantity{}, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, typ, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, typ, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(typ string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, _ := values(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, typ, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, typ, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	allowed := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		allowed = float64(enforced.MilliValue())
	}
	if observed > allowed {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, typ, enforced.String(), shown)
	}
	return nil
}

// aggregate words several errors as Kubernetes' aggregate does: one
// alone, several as "[a, b]" (duplicates once).
func aggregate(errs []error) error {
	var msgs []string
	seen := map[string]bool{}
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			msgs = append(msgs, e.Error())
		}
	}
	switch len(msgs) {
	case 0:
		return nil
	case 1:
		return errors.New(msgs[0])
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}
