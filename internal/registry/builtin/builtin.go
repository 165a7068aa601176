package builtin

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/admissionregistration"
	"github.com/setpoint-dev/setpoint/internal/registry/apiextensions"
	"github.com/setpoint-dev/setpoint/internal/registry/apiregistration"
	"github.com/setpoint-dev/setpoint/internal/registry/apps"
	"github.com/setpoint-dev/setpoint/internal/registry/authentication"
	"github.com/setpoint-dev/setpoint/internal/registry/authorization"
	"github.com/setpoint-dev/setpoint/internal/registry/autoscaling"
	"github.com/setpoint-dev/setpoint/internal/registry/batch"
	"github.com/setpoint-dev/setpoint/internal/registry/certificates"
	"github.com/setpoint-dev/setpoint/internal/registry/coordination"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
	"github.com/setpoint-dev/setpoint/internal/registry/discoveryv1"
	"github.com/setpoint-dev/setpoint/internal/registry/dra"
	"github.com/setpoint-dev/setpoint/internal/registry/events"
	"github.com/setpoint-dev/setpoint/internal/registry/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/registry/networking"
	"github.com/setpoint-dev/setpoint/internal/registry/node"
	"github.com/setpoint-dev/setpoint/internal/registry/policy"
	"github.com/setpoint-dev/setpoint/internal/registry/rbac"
	"github.com/setpoint-dev/setpoint/internal/registry/scheduling"
	storagereg "github.com/setpoint-dev/setpoint/internal/registry/storage"
	"github.com/setpoint-dev/setpoint/internal/registry/storagemigration"
)

// Resources returns the descriptors of every built-in resource, new on each
// call, group by group in the order kube-apiserver v1.37 lists the groups in
// discovery: core, then apiregistration.k8s.io, apps, events.k8s.io,
// authentication, authorization, autoscaling, batch, certificates,
// networking, policy, rbac, storage, admissionregistration, apiextensions,
// scheduling, coordination, node, discovery, resource, flowcontrol,
// storagemigration.
func Resources() []*registry.Resource {
	var out []*registry.Resource
	for _, group := range []func() []*registry.Resource{
		apps.Resources,
		events.Resources,
		authentication.Resources,
		authorization.Resources,
		autoscaling.Resources,
		batch.Resources,
		certificates.Resources,
		networking.Resources,
		policy.Resources,
		rbac.Resources,
		storagereg.Resources,
		admissionregistration.Resources,
		apiextensions.Resources,
		scheduling.Resources,
		coordination.Resources,
		node.Resources,
		discoveryv1.Resources,
		dra.Resources,
		flowcontrol.Resources,
		storagemigration.Resources,
	} {
		out = append(out, group()...)
	}
	// apiregistration.k8s.io keeps a local APIService for each group-version
	// served, as kube-apiserver does (its own included).
	served := groupVersions(append(core.Resources(), out...))
	gvs := func() []schema.GroupVersion { return served }
	return append(append(core.Resources(), apiregistration.Resources(gvs)...), out...)
}

// groupVersions lists the group-versions of resources, each once, in
// order.
func groupVersions(resources []*registry.Resource) []schema.GroupVersion {
	var out []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, r := range resources {
		if gv := r.GroupVersion(); !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}
