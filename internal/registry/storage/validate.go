package storage

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// Limits of kube-apiserver's storage validation.
const (
	maxParameters        = 512
	maxParametersSize    = 256 << 10 // bytes of keys and values together
	maxAttachMetadata    = 256 << 10
	maxVolumeErrorLength = 1024
	maxCSINodeIDLength   = 256
	maxCSIDriverName     = 63
)

// immutable is the error kube-apiserver v1.37 gives for a changed field
// whose immutability its declarative validation checks: the value is
// rendered as null.
func immutable(p *field.Path) *field.Error {
	return field.Invalid(p, nil, "field is immutable")
}

// csiDriverName checks the name of a CSI driver: required, at most 63
// characters, a DNS subdomain in any case.
func csiDriverName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > maxCSIDriverName {
		errs = append(errs, field.TooLong(p, "", maxCSIDriverName))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// provisioner checks a required provisioner (or driver) name, a qualified
// name in any case.
func provisioner(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, name)}
	}
	return strategy.Check(p, strings.ToLower(name), validation.IsQualifiedName)
}

// parameters checks opaque provisioner parameters: non-empty keys, at most
// 512 of them and 256 KiB in all; allowEmpty false requires one at least.
func parameters(p *field.Path, params map[string]string, allowEmpty bool) field.ErrorList {
	if len(params) > maxParameters {
		return field.ErrorList{field.TooLong(p, "", maxParameters)}
	}
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(params) {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		size += len(k) + len(params[k])
	}
	if size > maxParametersSize {
		errs = append(errs, field.TooLong(p, "", maxParametersSize))
	}
	if !allowEmpty && len(params) == 0 {
		errs = append(errs, field.Required(p, "must contain at least one key/value pair"))
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	return sets.List(sets.KeySet(m))
}
