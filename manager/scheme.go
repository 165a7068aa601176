package manager

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/rest"
)

// NewScheme returns a scheme holding every kind of k8s.io/api, all groups
// and versions, apiextensions.k8s.io/v1, apiregistration.k8s.io/v1 and the
// meta/v1 kinds: rest.NewScheme. Add your own kinds (custom resources) to
// it with their AddToScheme before passing it in Options.Scheme; that is
// all a Go type of yours needs.
func NewScheme() (*runtime.Scheme, error) { return rest.NewScheme() }
