package builder

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/controller"
)

// errorPolicy completes o's error policy for a controller of the For kind
// gvk: the requests name objects of that kind, and with MaxRetries a
// dropped request leaves an event on its object, recorded as the
// controller's name.
func (b *Builder) errorPolicy(name string, gvk schema.GroupVersionKind, o controller.Options) controller.Options {
	if o.ObjectKind.Empty() {
		o.ObjectKind = gvk
	}
	if o.MaxRetries > 0 && o.Recorder == nil && !o.ObjectKind.Empty() {
		if rec, err := b.mgr.GetEventRecorderFor(name); err == nil {
			o.Recorder = rec
		} else {
			b.mgr.Logger().Error("builder: no event recorder; dropped requests leave no event", "controller", name, "err", err)
		}
	}
	return o
}
