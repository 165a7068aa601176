package rest

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GetSubresource reads a subresource of the named object, decoded as O
// (the autoscaling/v1 Scale of a workload: GetSubresource[*autoscalingv1.Scale](ctx, deployments, "web", "scale", opts)).
// O must be registered in the client's scheme.
func GetSubresource[O runtime.Object, T, L runtime.Object](ctx context.Context, r *Resource[T, L], name, subresource string, opts metav1.GetOptions) (O, error) {
	q, err := params(&opts)
	if err != nil {
		return zeroOf[O](), err
	}
	return decodeNew[O](r, ctx, &request{method: http.MethodGet, path: r.path(name) + "/" + subresource, query: q, name: name})
}
