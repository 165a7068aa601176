package customresource

import (
	"fmt"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// scale reads and writes the replica paths a CRD names for its scale
// subresource.
type scale struct {
	spec, status, selector []string // nil selector: none
	// paths is the spec replicas path of every version of the CRD (nil
	// for those without the scale subresource), by group/version.
	paths map[string][]string
}

func newScale(crd *apiextv1.CustomResourceDefinition, s *apiextv1.CustomResourceSubresourceScale) scale {
	sc := scale{spec: splitPath(s.SpecReplicasPath), status: splitPath(s.StatusReplicasPath), paths: map[string][]string{}}
	if s.LabelSelectorPath != nil && *s.LabelSelectorPath != "" {
		sc.selector = splitPath(*s.LabelSelectorPath)
	}
	for _, v := range crd.Spec.Versions {
		var path []string
		if v.Subresources != nil && v.Subresources.Scale != nil {
			path = splitPath(v.Subresources.Scale.SpecReplicasPath)
		}
		sc.paths[crd.Spec.Group+"/"+v.Name] = path
	}
	return sc
}

// splitPath splits a JSON path of the form CRDs use (".spec.replicas").
func splitPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

// SpecReplicasPaths implements registry.ScaleReplicasPaths.
func (s scale) SpecReplicasPaths() map[string][]string { return s.paths }

// Replicas returns spec replicas (0 when unset), status replicas (0 when
// unset) and the selector string (a string at labelSelectorPath, or a
// LabelSelector object rendered in its string form).
func (s scale) Replicas(obj runtime.Object) (spec, status int32, selector string, err error) {
	o := content(obj)
	if spec, err = readInt(o, s.spec); err != nil {
		return 0, 0, "", err
	}
	if status, err = readInt(o, s.status); err != nil {
		return 0, 0, "", err
	}
	if s.selector != nil {
		v, found, _ := unstructured.NestedFieldNoCopy(o, s.selector...)
		switch sel := v.(type) {
		case string:
			selector = sel
		case map[string]any:
			ls := &metav1.LabelSelector{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sel, ls); err != nil {
				return 0, 0, "", fmt.Errorf(".%s: %w", strings.Join(s.selector, "."), err)
			}
			selector = metav1.FormatLabelSelector(ls)
		default:
			if found && v != nil {
				return 0, 0, "", fmt.Errorf(".%s is not a label selector", strings.Join(s.selector, "."))
			}
		}
	}
	return spec, status, selector, nil
}

// SetReplicas writes spec replicas.
func (s scale) SetReplicas(obj runtime.Object, replicas int32) error {
	return unstructured.SetNestedField(content(obj), int64(replicas), s.spec...)
}

func readInt(o map[string]any, path []string) (int32, error) {
	v, found, _ := unstructured.NestedFieldNoCopy(o, path...)
	if !found || v == nil {
		return 0, nil
	}
	switch n := v.(type) {
	case int64:
		return int32(n), nil
	case float64:
		return int32(n), nil
	}
	return 0, fmt.Errorf(".%s is %T, not an integer", strings.Join(path, "."), v)
}
