package podspec

import "k8s.io/apimachinery/pkg/util/validation/field"

// Source is one volume source a pod volume or a PersistentVolume may set:
// Name is the field a second source is refused at (kube-apiserver's
// spelling, which is not always the JSON name: "downwarAPI", "cephFS"),
// Set whether it is set, Validate its own checks, at the paths
// kube-apiserver reports them.
type Source struct {
	Name     string
	Set      bool
	Validate func() field.ErrorList
}

// tooManySources is kube-apiserver's refusal of a second volume source.
const tooManySources = "may not specify more than 1 volume type"

// ValidateSources requires exactly one set source among srcs (in
// kube-apiserver's order) and checks it: as kube-apiserver does, the first
// set source is checked and each further one refused at its own field,
// except one without a Name, which is always checked (a PersistentVolume's
// flexVolume). each, when given, adds the checks of a set source that
// need more than the source; checked tells whether Validate ran for it.
func ValidateSources(srcs []Source, p *field.Path, each func(src Source, checked bool) field.ErrorList) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, src := range srcs {
		if !src.Set {
			continue
		}
		checked := n == 0 || src.Name == ""
		if checked {
			n++
			errs = append(errs, src.Validate()...)
		} else {
			errs = append(errs, field.Forbidden(p.Child(src.Name), tooManySources))
		}
		if each != nil {
			errs = append(errs, each(src, checked)...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// RequireAll takes (field name, present) pairs and requires each, in
// order, under p.
func RequireAll(p *field.Path, pairs ...any) field.ErrorList {
	var errs field.ErrorList
	for i := 0; i+1 < len(pairs); i += 2 {
		if !pairs[i+1].(bool) {
			errs = append(errs, field.Required(p.Child(pairs[i].(string)), ""))
		}
	}
	return errs
}
