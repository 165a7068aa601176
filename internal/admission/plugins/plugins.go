package plugins

import (
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/admission/defaultstorageclass"
	"github.com/setpoint-dev/setpoint/internal/admission/defaulttolerationseconds"
	"github.com/setpoint-dev/setpoint/internal/admission/limitranger"
	"github.com/setpoint-dev/setpoint/internal/admission/mutatingadmissionpolicy"
	"github.com/setpoint-dev/setpoint/internal/admission/namespacelifecycle"
	"github.com/setpoint-dev/setpoint/internal/admission/noderestriction"
	"github.com/setpoint-dev/setpoint/internal/admission/podsecurity"
	"github.com/setpoint-dev/setpoint/internal/admission/priority"
	"github.com/setpoint-dev/setpoint/internal/admission/resourcequota"
	"github.com/setpoint-dev/setpoint/internal/admission/runtimeclass"
	"github.com/setpoint-dev/setpoint/internal/admission/serviceaccount"
	"github.com/setpoint-dev/setpoint/internal/admission/storageobjectinuseprotection"
	"github.com/setpoint-dev/setpoint/internal/admission/validatingadmissionpolicy"
	"github.com/setpoint-dev/setpoint/internal/admission/webhook"
	"github.com/setpoint-dev/setpoint/internal/audit"
)

// Options select and configure the plugins, as kube-apiserver's flags.
type Options struct {
	// Enable and Disable are --enable-admission-plugins and
	// --disable-admission-plugins.
	Enable, Disable []string
	// NotReadyTolerationSeconds and UnreachableTolerationSeconds are
	// --default-not-ready-toleration-seconds and
	// --default-unreachable-toleration-seconds (0: 300).
	NotReadyTolerationSeconds, UnreachableTolerationSeconds int64
	// Metrics is where plugins register their metrics (PodSecurity's
	// pod_security_*); nil keeps them unregistered.
	Metrics prometheus.Registerer
}

// Constructors are the plugins of the chain, by name. NodeRestriction
// (internal/admission/noderestriction) and PodSecurity
// (internal/admission/podsecurity) join here; their place in the chain is
// admission.Order's.
func Constructors(o Options) map[string]func() (admission.Plugin, error) {
	return map[string]func() (admission.Plugin, error){
		namespacelifecycle.PluginName: func() (admission.Plugin, error) { return namespacelifecycle.New(), nil },
		limitranger.PluginName:        func() (admission.Plugin, error) { return limitranger.New(), nil },
		serviceaccount.PluginName:     func() (admission.Plugin, error) { return serviceaccount.New(), nil },
		priority.PluginName:           func() (admission.Plugin, error) { return priority.New(), nil },
		defaulttolerationseconds.PluginName: func() (admission.Plugin, error) {
			return defaulttolerationseconds.New(o.NotReadyTolerationSeconds, o.UnreachableTolerationSeconds), nil
		},
		noderestriction.Name: func() (admission.Plugin, error) { return noderestriction.New(), nil },
		podsecurity.Name: func() (admission.Plugin, error) {
			return podsecurity.New(nil, podsecurity.Options{Annotate: audit.AddAnnotation, Metrics: o.Metrics})
		},
		defaultstorageclass.PluginName:          func() (admission.Plugin, error) { return defaultstorageclass.New(), nil },
		storageobjectinuseprotection.PluginName: func() (admission.Plugin, error) { return storageobjectinuseprotection.New(), nil },
		runtimeclass.PluginName:                 func() (admission.Plugin, error) { return runtimeclass.New(), nil },
		resourcequota.PluginName:                func() (admission.Plugin, error) { return resourcequota.New(), nil },
		mutatingadmissionpolicy.Name:            func() (admission.Plugin, error) { return mutatingadmissionpolicy.New(), nil },
		validatingadmissionpolicy.Name: func() (admission.Plugin, error) {
			return validatingadmissionpolicy.New(audit.AddAnnotation), nil
		},
		webhook.MutatingName: func() (admission.Plugin, error) {
			return webhook.NewMutating(webhook.Options{Metrics: o.Metrics})
		},
		webhook.ValidatingName: func() (admission.Plugin, error) {
			return webhook.NewValidating(webhook.Options{Metrics: o.Metrics})
		},
	}
}

// KindOwned are kube-apiserver's plugins that setpoint runs as a kind's own
// admission, always.
func KindOwned() []string {
	return []string{
		"PersistentVolumeClaimResize", "PodResizeValidator", "CertificateApproval", "CertificateSigning",
		"CertificateSubjectRestriction", "ClusterTrustBundleAttest", "DefaultIngressClass",
	}
}

// New returns the chain the options select (the zero Options:
// kube-apiserver's default plugins).
func New(o Options) (*admission.Chain, error) {
	enable, disable := o.Enable, o.Disable
	names, err := admission.Enabled(enable, disable)
	if err != nil {
		return nil, err
	}
	for _, n := range disable {
		if slices.Contains(KindOwned(), n) {
			return nil, fmt.Errorf("disable-admission-plugins plugin %q cannot be disabled: setpoint runs it as the admission of its kind", n)
		}
	}
	ctors := Constructors(o)
	for _, n := range enable {
		if ctors[n] == nil && !slices.Contains(KindOwned(), n) {
			return nil, fmt.Errorf("enable-admission-plugins plugin %q is not implemented by setpoint", n)
		}
	}
	var ps []admission.Plugin
	for _, n := range names {
		if ctor := ctors[n]; ctor != nil {
			p, err := ctor()
			if err != nil {
				return nil, fmt.Errorf("admission plugin %s: %w", n, err)
			}
			ps = append(ps, p)
		}
	}
	return admission.NewChain(ps...)
}

// Default is the chain of kube-apiserver's default plugins.
func Default() *admission.Chain {
	c, err := New(Options{})
	if err != nil {
		panic(fmt.Sprintf("admission: default chain: %v", err)) // the tables above are wrong
	}
	return c
}
