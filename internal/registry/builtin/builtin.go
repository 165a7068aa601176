package builtin

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/admissionregistration"
	"github.com/setpoint-dev/setpoint/internal/registry/apiextensions"
	"github.com/setpoint-dev/setpoint/internal/registry/apiregistration"
	"github.com/setpoint-dev/setpoint/internal/registry/apps"
	"github.com/setpoint-dev/setpoint/internal/registry/coordination"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
	"github.com/setpoint-dev/setpoint/internal/registry/dra"
	storagereg "github.com/setpoint-dev/setpoint/internal/registry/storage"
	"github.com/setpoint-dev/setpoint/internal/registry/storagemigration"
)

// Resources returns the descriptors of every built-in resource, new on each
// call, group by group in the order kube-apiserver lists the groups in
// discovery.
func Resources() []*registry.Resource {
	var out []*registry.Resource
	for _, group := range []func() []*registry.Resource{
		core.Resources,
		apps.Resources,
		storagereg.Resources,
		admissionregistration.Resources,
		apiextensions.Resources,
		coordination.Resources,
		dra.Resources,
		storagemigration.Resources,
	} {
		out = append(out, group()...)
	}
	// apiregistration.k8s.io keeps a local APIService for each of the
	// group-versions served above, as kube-apiserver does.
	served := groupVersions(out)
	return append(apiregistration.Resources(func() []schema.GroupVersion { return served }), out...)
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
