package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// VersionConverter converts custom objects between the versions of one
// CustomResourceDefinition, as a conversion webhook does. apiVersion is
// the target's "<group>/<version>". Objects already at apiVersion are
// returned as they are, with no call. Errors are *apierrors.StatusError
// values ready for the client.
type VersionConverter interface {
	// Convert converts one object. It must not modify obj.
	Convert(ctx context.Context, obj *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error)
	// ConvertList converts many objects in one exchange and returns them
	// in order. It must not modify items.
	ConvertList(ctx context.Context, items []*unstructured.Unstructured, apiVersion string) ([]*unstructured.Unstructured, error)
}
