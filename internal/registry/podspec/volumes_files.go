package podspec

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fileModeMessage is kube-apiserver's refusal of a file mode out of range.
const fileModeMessage = "must be a number between 0 and 0777 (octal), both inclusive"

// validateFileMode checks an optional file mode: 0 to 0777.
func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeMessage)}
	}
	return nil
}

// validateLocalPath checks a file's path inside a volume: relative, with
// no ".." element, and not starting with "..".
func validateLocalPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	if slices.Contains(strings.Split(target, "/"), "..") {
		errs = append(errs, field.Invalid(p, target, "must not contain '..'"))
	}
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}

// validateDownwardAPIFile checks a downward API file (p is the path
// kube-apiserver reports it on): a local path, and exactly one of a pod
// field or a container resource.
func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		errs = append(errs, validateVolumeFieldRef(f.FieldRef, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		errs = append(errs, validateVolumeResourceRef(f.ResourceFieldRef, p.Child("resourceFieldRef"))...)
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(errs, validateFileMode(f.Mode, p.Child("mode"))...)
}

// volumeFieldPaths are the pod fields a downward API volume may write
// (labels and annotations also one by one: metadata.labels['key']).
var volumeFieldPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}

// podFieldLabels are the pod fields the downward API knows at all; a
// volume refuses the others of them as not supported, the rest as
// unknown.
var podFieldLabels = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
	"metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
	"status.phase", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}

// validateVolumeFieldRef checks a downward API file's pod field as
// kube-apiserver does: converted from v1 (spec.host is spec.nodeName),
// then one a volume may write; a subscript must be a label or annotation
// key.
func validateVolumeFieldRef(fs *corev1.ObjectFieldSelector, p *field.Path) field.ErrorList {
	fp := p.Child("fieldPath")
	switch {
	case fs.APIVersion == "":
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	case fs.FieldPath == "":
		return field.ErrorList{field.Required(fp, "")}
	}
	label, err := convertPodFieldLabel(fs.APIVersion, fs.FieldPath)
	if err != nil {
		return field.ErrorList{field.Invalid(fp, fs.FieldPath, fmt.Sprintf("error converting fieldPath: %v", err))}
	}
	if base, key, ok := splitSubscript(label); ok {
		if base == "metadata.annotations" {
			key = strings.ToLower(key)
		}
		var errs field.ErrorList
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(p, key, msg))
		}
		return errs
	}
	if !slices.Contains(volumeFieldPaths, label) {
		return field.ErrorList{field.NotSupported(fp, label, volumeFieldPaths)}
	}
	return nil
}

// convertPodFieldLabel is the v1 conversion of a downward API field path:
// labels and annotations may take a subscript, spec.host is the old name
// of spec.nodeName, and anything else must be a known pod field.
func convertPodFieldLabel(version, label string) (string, error) {
	if version != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", version)
	}
	if base, _, ok := splitSubscript(label); ok {
		if base == "metadata.annotations" || base == "metadata.labels" {
			return label, nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", label)
	}
	switch {
	case label == "spec.host":
		return "spec.nodeName", nil
	case slices.Contains(podFieldLabels, label):
		return label, nil
	}
	return "", fmt.Errorf("field label not supported: %s", label)
}

// splitSubscript splits "base['key']" into base and key.
func splitSubscript(fp string) (base, key string, ok bool) {
	s, found := strings.CutSuffix(fp, "']")
	if !found {
		return fp, "", false
	}
	base, key, ok = strings.Cut(s, "['")
	if !ok || base == "" {
		return fp, "", false
	}
	return base, key, true
}

// containerResourcePaths are the container resources a downward API file
// may write, besides hugepages (requests.hugepages-<size>,
// limits.hugepages-<size>).
var containerResourcePaths = []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory",
	"requests.cpu", "requests.ephemeral-storage", "requests.memory"}

// validateVolumeResourceRef checks a downward API file's container
// resource: a container name, a resource it may write, and a divisor that
// fits the resource.
func validateVolumeResourceRef(rs *corev1.ResourceFieldSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	hugepages := strings.HasPrefix(rs.Resource, "requests.hugepages-") || strings.HasPrefix(rs.Resource, "limits.hugepages-")
	switch {
	case rs.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case rs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !slices.Contains(containerResourcePaths, rs.Resource) && !hugepages:
		errs = append(errs, field.NotSupported(p.Child("resource"), rs.Resource, containerResourcePaths))
	}
	return append(errs, validateDivisor(rs.Resource, rs.Divisor, hugepages, p.Child("divisor"))...)
}

// Divisors a container resource may be divided by.
var (
	cpuDivisors  = []string{"1m", "1"}
	byteDivisors = []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)

// validateDivisor checks a set (non-zero) divisor against the resource's
// units; the value reported is the resource's name, as kube-apiserver's.
func validateDivisor(name string, d resource.Quantity, hugepages bool, p *field.Path) field.ErrorList {
	if d.IsZero() {
		return nil
	}
	const bytes = "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the "
	var errs field.ErrorList
	s := d.String()
	switch name {
	case "limits.cpu", "requests.cpu":
		if !slices.Contains(cpuDivisors, s) {
			errs = append(errs, field.Invalid(p, name, "only divisor's values 1m and 1 are supported with the cpu resource"))
		}
	case "limits.memory", "requests.memory":
		if !slices.Contains(byteDivisors, s) {
			errs = append(errs, field.Invalid(p, name, bytes+"memory resource"))
		}
	case "limits.ephemeral-storage", "requests.ephemeral-storage":
		if !slices.Contains(byteDivisors, s) {
			errs = append(errs, field.Invalid(p, name, bytes+"local ephemeral storage resource"))
		}
	}
	if hugepages && !slices.Contains(byteDivisors, s) {
		errs = append(errs, field.Invalid(p, name, bytes+"hugepages resource"))
	}
	return errs
}
