package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// resource is a namespaced resource that can be deleted.
type resource struct {
	gvr   schema.GroupVersionResource
	verbs []string
}

func (r resource) supports(verb string) bool { return slices.Contains(r.verbs, verb) }

// discovered is the outcome of one discovery pass. Failures are kept
// apart so that the namespace conditions can report them; the resources
// found are used anyway.
type discovered struct {
	resources []resource
	// discoveryErr joins the groups whose resources could not be read;
	// parseErr the group versions that did not parse.
	discoveryErr, parseErr error
}

// discover lists the namespaced resources, in their group's preferred
// version, that support delete (subresources excluded).
func discover(ctx context.Context, c *rest.Client) discovered {
	groups, err := c.ServerGroups(ctx)
	if err != nil {
		return discovered{discoveryErr: err}
	}
	var out discovered
	var discErrs, parseErrs []error
	for _, g := range groups.Groups {
		gv, err := schema.ParseGroupVersion(g.PreferredVersion.GroupVersion)
		if err != nil {
			parseErrs = append(parseErrs, fmt.Errorf("group version %q: %w", g.PreferredVersion.GroupVersion, err))
			continue
		}
		list, err := c.ServerResourcesForGroupVersion(ctx, gv)
		if err != nil {
			discErrs = append(discErrs, err)
			continue
		}
		for _, r := range list.APIResources {
			if !r.Namespaced || strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			out.resources = append(out.resources, resource{gvr: gv.WithResource(r.Name), verbs: r.Verbs})
		}
	}
	out.discoveryErr, out.parseErr = errors.Join(discErrs...), errors.Join(parseErrs...)
	return out
}
