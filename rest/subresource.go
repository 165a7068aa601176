package rest

import (
	"context"
	"fmt"
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
	return decodeNew(r, ctx, &request{method: http.MethodGet, path: r.path(name) + "/" + subresource, query: q, name: name}, newOf[O])
}

// DoSubresource sends body (nil: no body) with method (GET, POST or PUT)
// to the named
// subresource of the named object, with opts (CreateOptions, UpdateOptions
// or GetOptions) as query parameters, and decodes the answer into into
// (nil: discarded). A GET sends no body. It serves bodies of another kind
// than T: the Eviction of pods/eviction, the Scale of a workload's scale.
func (r *Resource[T, L]) DoSubresource(ctx context.Context, method, name, subresource string, opts, body, into runtime.Object) error {
	q, err := params(opts)
	if err != nil {
		return err
	}
	req := &request{method: method, path: r.path(name) + "/" + subresource, query: q, name: name}
	if body != nil {
		if req.body, req.contentType, err = r.encode(body); err != nil {
			return err
		}
	}
	if into == nil {
		return r.discard(ctx, req)
	}
	b, ctype, err := r.call(ctx, req)
	if err != nil {
		return err
	}
	if _, _, err := r.decoderFor(ctype).Decode(b, nil, into); err != nil {
		return fmt.Errorf("%s %s: decode %T: %w", method, req.path, into, err)
	}
	return nil
}
