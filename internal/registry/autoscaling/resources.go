package autoscaling

import "github.com/setpoint-dev/setpoint/internal/registry"

// Resources returns the descriptors of the autoscaling resources, new on
// each call: v2 (the preferred and stored version), then v1.
func Resources() []*registry.Resource {
	return []*registry.Resource{hpaV2Resource(), hpaV1Resource()}
}
