package quota

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Add returns a + b.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range a {
		out[k] = v.DeepCopy()
	}
	for k, v := range b {
		q := out[k]
		q.Add(v)
		out[k] = q
	}
	return out
}

// SubtractNonNegative returns a - b, with every result below zero raised
// to zero.
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	zero := resource.MustParse("0")
	for k, v := range a {
		q := v.DeepCopy()
		if s, ok := b[k]; ok {
			q.Sub(s)
		}
		if q.Cmp(zero) < 0 {
			q = zero.DeepCopy()
		}
		out[k] = q
	}
	return out
}

// Mask returns the entries of l whose names are in names.
func Mask(l corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if v, ok := l[n]; ok {
			out[n] = v.DeepCopy()
		}
	}
	return out
}

// Names returns the names of l, sorted.
func Names(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// RemoveZeros returns l without its zero entries.
func RemoveZeros(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// Negative returns the names whose value in l is below zero.
func Negative(l corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, k := range Names(l) {
		if v := l[k]; v.Sign() < 0 {
			out = append(out, k)
		}
	}
	return out
}

// LessThanOrEqual reports whether every entry of a that b limits is at
// most b's, and the names that exceed it.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for _, k := range Names(a) {
		if lim, ok := b[k]; ok {
			if v := a[k]; v.Cmp(lim) > 0 {
				exceeded = append(exceeded, k)
			}
		}
	}
	return len(exceeded) == 0, exceeded
}

// Equal reports whether a and b hold the same names and quantities.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// Intersection returns the names of a that are in b, in a's order.
func Intersection(a, b []corev1.ResourceName) []corev1.ResourceName {
	in := map[corev1.ResourceName]bool{}
	for _, n := range b {
		in[n] = true
	}
	var out []corev1.ResourceName
	for _, n := range a {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}

// String renders l as kube-apiserver's quota messages do: "name=value"
// sorted by name, joined by commas.
func String(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range Names(l) {
		v := l[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// NamesString renders names sorted, joined by commas.
func NamesString(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
