package admission

import (
	"fmt"
	"slices"
	"sort"
)

// Order is kube-apiserver's order of its admission plugins
// (AllOrderedPlugins of pkg/kubeapiserver/options): a chain runs its
// plugins in this order, whatever order the flags name them in.
func Order() []string {
	return []string{
		"AlwaysAdmit",
		"NamespaceAutoProvision",
		"NamespaceLifecycle",
		"NamespaceExists",
		"LimitPodHardAntiAffinityTopology",
		"LimitRanger",
		"ServiceAccount",
		"NodeRestriction",
		"TaintNodesByCondition",
		"AlwaysPullImages",
		"ImagePolicyWebhook",
		"PodSecurity",
		"PodNodeSelector",
		"Priority",
		"DefaultTolerationSeconds",
		"PodTolerationRestriction",
		"EventRateLimit",
		"ExtendedResourceToleration",
		"DefaultStorageClass",
		"StorageObjectInUseProtection",
		"PodGroupProtection",
		"OwnerReferencesPermissionEnforcement",
		"PersistentVolumeClaimResize",
		"RuntimeClass",
		"CertificateApproval",
		"CertificateSigning",
		"ClusterTrustBundleAttest",
		"CertificateSubjectRestriction",
		"DefaultIngressClass",
		"DenyServiceExternalIPs",
		"PodTopologyLabels",
		"PodGroupWorkloadExists",
		"NodeDeclaredFeatureValidator",
		"JobValidation",
		"PodResizeValidator",
		"MutatingAdmissionPolicy",
		"MutatingAdmissionWebhook",
		"ValidatingAdmissionPolicy",
		"ValidatingAdmissionWebhook",
		"ResourceQuota",
		"AlwaysDeny",
	}
}

// DefaultOn are the plugins kube-apiserver runs when no flag names them.
func DefaultOn() []string {
	return []string{
		"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "DefaultStorageClass",
		"PersistentVolumeClaimResize", "DefaultTolerationSeconds", "MutatingAdmissionWebhook",
		"ValidatingAdmissionWebhook", "ResourceQuota", "StorageObjectInUseProtection",
		"PodGroupProtection", "Priority", "TaintNodesByCondition", "RuntimeClass",
		"CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest",
		"CertificateSubjectRestriction", "DefaultIngressClass", "PodSecurity",
		"PodTopologyLabels", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy",
		"PodGroupWorkloadExists", "NodeDeclaredFeatureValidator", "JobValidation",
		"PodResizeValidator",
	}
}

// Enabled returns the plugins that run, in Order, for the values of
// --enable-admission-plugins and --disable-admission-plugins: the default
// ones, plus enable, minus disable. Names are checked as kube-apiserver
// checks them: an unknown name, or one in both lists, is an error.
func Enabled(enable, disable []string) ([]string, error) {
	known := Order()
	var errs []error
	for _, n := range enable {
		if !slices.Contains(known, n) {
			errs = append(errs, fmt.Errorf("enable-admission-plugins plugin %q is unknown", n))
		}
	}
	for _, n := range disable {
		if !slices.Contains(known, n) {
			errs = append(errs, fmt.Errorf("disable-admission-plugins plugin %q is unknown", n))
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) && !slices.Contains(both, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		sort.Strings(both)
		errs = append(errs, fmt.Errorf("%v in enable-admission-plugins and disable-admission-plugins overlapped", both))
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	on := DefaultOn()
	var out []string
	for _, n := range known {
		if slices.Contains(enable, n) || (slices.Contains(on, n) && !slices.Contains(disable, n)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// joinErrors words several flag errors as one, "[a, b]" as kube's
// aggregate does.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return fmt.Errorf("%s]", msg)
}
