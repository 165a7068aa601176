package crdschema

import (
	"fmt"
	"reflect"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCRD checks a CRD as Kubernetes' apiextensions validation does for create (422 material): metadata.name == <plural>.<group>;
// group a DNS subdomain with at least one dot; names.plural/singular/kind/listKind valid (plural and singular lower-case DNS labels,
// kind/listKind valid identifiers, listKind != kind); scope Namespaced|Cluster; versions non-empty, unique names, valid DNS-1035 labels,
// exactly one storage: true, at least one served; each version's schema present and structural (Compile); subresources.scale paths
// (specReplicasPath .spec.*, statusReplicasPath .status.*, labelSelectorPath .spec.*/.status.*); additionalPrinterColumns
// (name, type in integer|number|string|boolean|date, valid jsonPath); conversion (strategy None, or Webhook with a client
// config and conversionReviewVersions, conversion.go).
//
// Call it after SetCRDDefaults (singular and listKind are required, as
// defaulting fills them). Like Kubernetes, a CRD with no served version is
// accepted (it serves nothing); status.storedVersions is checked only when
// set (SetCRDDefaults sets it); spec.preserveUnknownFields must be false;
// groups under k8s.io and kubernetes.io need the api-approved.kubernetes.io
// annotation. The ObjectMeta rules other than the name are the server's.
func ValidateCRD(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	return validateCRD(crd, nil)
}

// validateCRD is ValidateCRD; old is the CRD before an update (nil on
// create), which decides how x-kubernetes-validations rules are checked.
func validateCRD(crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	if crd == nil {
		return field.ErrorList{field.Required(field.NewPath(""), "a CustomResourceDefinition")}
	}
	var errs field.ErrorList
	errs = append(errs, validateCRDName(crd)...)
	errs = append(errs, validateAPIApproval(crd)...)
	errs = append(errs, validateCRDSpec(&crd.Spec, old, field.NewPath("spec"))...)
	errs = append(errs, validateNames(&crd.Status.AcceptedNames, field.NewPath("status", "acceptedNames"))...)
	if len(crd.Status.StoredVersions) > 0 {
		errs = append(errs, validateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, field.NewPath("status", "storedVersions"))...)
	}
	return errs
}

// CleanupFinalizer holds a deleted CustomResourceDefinition until the API
// server has removed every object of its resource.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// ValidateCRDStatus checks a status written through the status
// subresource as Kubernetes does: storedVersions is not empty, holds the
// storage version, and names only versions of spec.versions.
func ValidateCRDStatus(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	p := field.NewPath("status", "storedVersions")
	if len(crd.Status.StoredVersions) == 0 {
		return field.ErrorList{field.Invalid(p, crd.Status.StoredVersions, "must have at least one stored version")}
	}
	return validateStoredVersions(crd.Status.StoredVersions, crd.Spec.Versions, p)
}

// ValidateCRDUpdate adds update rules: spec.group, names.plural (status.acceptedNames) and scope are immutable;
// a version that is a stored version (status.storedVersions) cannot be removed.
//
// The stored versions are those of crd.Status and old.Status together (the
// server normally carries the old status over and appends the new storage
// version, see RecordStorageVersion). names.kind is also immutable once old
// has the Established condition, as in Kubernetes; scope is immutable always
// (Kubernetes only once established; setpoint establishes at once).
func ValidateCRDUpdate(crd, old *apiextv1.CustomResourceDefinition) field.ErrorList {
	if crd == nil || old == nil {
		return field.ErrorList{field.Required(field.NewPath(""), "a CustomResourceDefinition and its previous state")}
	}
	merged := crd.DeepCopy()
	for _, v := range old.Status.StoredVersions {
		if !contains(merged.Status.StoredVersions, v) {
			merged.Status.StoredVersions = append(merged.Status.StoredVersions, v)
		}
	}
	errs := validateCRD(merged, old)
	spec := field.NewPath("spec")
	immutable := func(changed bool, p *field.Path, value any) {
		if changed {
			errs = append(errs, field.Invalid(p, value, "field is immutable"))
		}
	}
	immutable(crd.Spec.Group != old.Spec.Group, spec.Child("group"), crd.Spec.Group)
	immutable(crd.Spec.Names.Plural != old.Spec.Names.Plural, spec.Child("names", "plural"), crd.Spec.Names.Plural)
	immutable(crd.Spec.Scope != old.Spec.Scope, spec.Child("scope"), crd.Spec.Scope)
	if isEstablished(old) {
		immutable(crd.Spec.Names.Kind != old.Spec.Names.Kind, spec.Child("names", "kind"), crd.Spec.Names.Kind)
	}
	return errs
}

func isEstablished(crd *apiextv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
			return true
		}
	}
	return false
}

// SetCRDDefaults applies apiextensions v1 defaulting to a CRD (names.singular = lower(kind), listKind = kind+"List",
// conversion strategy None, a conversion webhook Service's port 443; the schema's own "default" values are left as written).
//
// It also sets status.storedVersions to the storage version when empty, as
// Kubernetes' v1 defaulting does. apiextensions v1 has no printer column
// defaults beyond the zero values, so columns are left unchanged. Fields
// already set are never overwritten. A nil crd is a no-op.
func SetCRDDefaults(crd *apiextv1.CustomResourceDefinition) {
	if crd == nil {
		return
	}
	names := &crd.Spec.Names
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	if names.ListKind == "" && names.Kind != "" {
		names.ListKind = names.Kind + "List"
	}
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
	}
	if w := crd.Spec.Conversion.Webhook; w != nil && w.ClientConfig != nil && w.ClientConfig.Service != nil && w.ClientConfig.Service.Port == nil {
		port := int32(443)
		w.ClientConfig.Service.Port = &port
	}
	if len(crd.Status.StoredVersions) == 0 {
		RecordStorageVersion(crd)
	}
}

// RecordStorageVersion appends the storage version of spec.versions to
// status.storedVersions unless it is there, as Kubernetes' CRD strategy
// does on create and update. It reports whether it changed anything.
func RecordStorageVersion(crd *apiextv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if contains(crd.Status.StoredVersions, v.Name) {
			return false
		}
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		return true
	}
	return false
}

func validateCRDName(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	p := field.NewPath("metadata", "name")
	name := crd.Name
	if name == "" {
		return field.ErrorList{field.Required(p, "name or generateName is required")}
	}
	msgs := validation.IsDNS1123Subdomain(name)
	if name != crd.Spec.Names.Plural+"."+crd.Spec.Group {
		msgs = append(msgs, `must be spec.names.plural+"."+spec.group`)
	}
	if len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, ", "))}
	}
	return nil
}

// validateAPIApproval requires the api-approved.kubernetes.io annotation on
// groups Kubernetes reserves for its own APIs.
func validateAPIApproval(crd *apiextv1.CustomResourceDefinition) field.ErrorList {
	g := crd.Spec.Group
	protected := g == "k8s.io" || g == "kubernetes.io" || strings.HasSuffix(g, ".k8s.io") || strings.HasSuffix(g, ".kubernetes.io")
	if !protected {
		return nil
	}
	const key = "api-approved.kubernetes.io"
	p := field.NewPath("metadata", "annotations").Key(key)
	value, ok := crd.Annotations[key]
	if !ok {
		return field.ErrorList{field.Required(p, fmt.Sprintf("protected groups must have approval annotation %q, see https://github.com/kubernetes/enhancements/pull/1111", key))}
	}
	if strings.HasPrefix(value, "unapproved") || strings.HasPrefix(value, "https://") || strings.HasPrefix(value, "http://") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, value, "protected groups must have approval annotation set to a URL or a value starting with \"unapproved\"")}
}

func validateCRDSpec(spec *apiextv1.CustomResourceDefinitionSpec, old *apiextv1.CustomResourceDefinition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case spec.Group == "":
		errs = append(errs, field.Required(p.Child("group"), ""))
	case len(validation.IsDNS1123Subdomain(spec.Group)) > 0:
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, strings.Join(validation.IsDNS1123Subdomain(spec.Group), ",")))
	case !strings.Contains(spec.Group, "."):
		errs = append(errs, field.Invalid(p.Child("group"), spec.Group, "should be a domain with at least one dot"))
	}
	switch spec.Scope {
	case "":
		errs = append(errs, field.Required(p.Child("scope"), ""))
	case apiextv1.ClusterScoped, apiextv1.NamespaceScoped:
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), spec.Scope, []string{string(apiextv1.ClusterScoped), string(apiextv1.NamespaceScoped)}))
	}
	if spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(p.Child("preserveUnknownFields"), true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
	}
	errs = append(errs, validateVersions(spec.Versions, old, p)...)
	names := p.Child("names")
	for _, req := range []struct{ value, name string }{
		{spec.Names.Plural, "plural"}, {spec.Names.Singular, "singular"}, {spec.Names.Kind, "kind"}, {spec.Names.ListKind, "listKind"},
	} {
		if req.value == "" {
			errs = append(errs, field.Required(names.Child(req.name), ""))
		}
	}
	errs = append(errs, validateNames(&spec.Names, names)...)
	errs = append(errs, validateConversion(spec.Conversion, old, p.Child("conversion"))...)
	return errs
}

// allowedAtStatusRoot are the root schema fields allowed when the status
// subresource is enabled: those that survive taking properties[status] as
// the status schema.
var allowedAtStatusRoot = []string{"Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum",
	"ExclusiveMinimum", "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf",
	"Required", "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations"}

func validateStatusRoot(s *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	if s.Type != "" && s.Type != "object" {
		return field.ErrorList{field.Invalid(p.Child("type"), s.Type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)}
	}
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() || contains(allowedAtStatusRoot, v.Type().Field(i).Name) {
			continue
		}
		return field.ErrorList{field.Invalid(p, internalSchemaValue(s, v.Type().Field(i).Name), fmt.Sprintf("only %v fields are allowed at the root of the schema if the status subresource is enabled", allowedAtStatusRoot))}
	}
	return nil
}
