package builtin

import (
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/admissionregistration"
	"github.com/setpoint-dev/setpoint/internal/registry/apiextensions"
	"github.com/setpoint-dev/setpoint/internal/registry/apps"
	"github.com/setpoint-dev/setpoint/internal/registry/coordination"
	"github.com/setpoint-dev/setpoint/internal/registry/core"
	storagereg "github.com/setpoint-dev/setpoint/internal/registry/storage"
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
		coordination.Resources,
		apiextensions.Resources,
	} {
		out = append(out, group()...)
	}
	return out
}
