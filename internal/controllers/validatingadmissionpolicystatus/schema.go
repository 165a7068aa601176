package validatingadmissionpolicystatus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/rest"
)

// schemas resolves kinds and their OpenAPI schemas through the server, one
// fetch per group-version for one type check.
type schemas struct {
	c         *rest.Client
	resources map[schema.GroupVersion]map[string]string // resource → kind
	docs      map[schema.GroupVersion]map[string]*spec.Schema
}

func newSchemas(c *rest.Client) *schemas {
	return &schemas{c: c, resources: map[schema.GroupVersion]map[string]string{}, docs: map[schema.GroupVersion]map[string]*spec.Schema{}}
}

// kindFor is the kind of a resource (false when not served).
func (s *schemas) kindFor(ctx context.Context, gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	gv := gvr.GroupVersion()
	m, ok := s.resources[gv]
	if !ok {
		m = map[string]string{}
		if list, err := s.c.ServerResourcesForGroupVersion(ctx, gv); err == nil {
			for _, r := range list.APIResources {
				if !strings.Contains(r.Name, "/") {
					m[r.Name] = r.Kind
				}
			}
		}
		s.resources[gv] = m
	}
	k, ok := m[gvr.Resource]
	return gv.WithKind(k), ok
}

// schemaFor is gvk's schema with its references resolved (nil when the
// server publishes none).
func (s *schemas) schemaFor(ctx context.Context, gvk schema.GroupVersionKind) *spec.Schema {
	gv := gvk.GroupVersion()
	defs, ok := s.docs[gv]
	if !ok {
		var doc struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := s.c.OpenAPIV3(ctx, gv, &doc); err == nil {
			defs = doc.Components.Schemas
		}
		s.docs[gv] = defs
	}
	for name, d := range defs {
		if hasGVK(d, gvk) {
			out, err := resolveRefs(defs, "#/components/schemas/"+name)
			if err != nil {
				return nil
			}
			return out
		}
	}
	return nil
}

func hasGVK(d *spec.Schema, gvk schema.GroupVersionKind) bool {
	raw, ok := d.Extensions["x-kubernetes-group-version-kind"]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var gvks []struct{ Group, Version, Kind string }
	if json.Unmarshal(b, &gvks) != nil {
		return false
	}
	for _, g := range gvks {
		if g.Group == gvk.Group && g.Version == gvk.Version && g.Kind == gvk.Kind {
			return true
		}
	}
	return false
}

// resolveRefs returns the schema root names with every $ref (also one
// wrapped in allOf) replaced by what it refers to; a reference back into
// its own chain becomes an empty object.
func resolveRefs(defs map[string]*spec.Schema, root string) (*spec.Schema, error) {
	return inline(defs, map[string]bool{}, &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(root)}})
}

func inline(defs map[string]*spec.Schema, chain map[string]bool, s *spec.Schema) (*spec.Schema, error) {
	out := *s
	if ref, ok := refOf(s); ok {
		if chain[ref] {
			return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}, nil
		}
		chain[ref] = true
		defer delete(chain, ref)
		target, ok := defs[strings.TrimPrefix(ref, "#/components/schemas/")]
		if !ok {
			return nil, fmt.Errorf("cannot resolve Ref %q", ref)
		}
		out = *target
	}
	if len(out.Properties) > 0 {
		props := make(map[string]spec.Schema, len(out.Properties))
		for name, p := range out.Properties {
			r, err := inline(defs, chain, &p)
			if err != nil {
				return nil, err
			}
			props[name] = *r
		}
		out.Properties = props
	}
	if ap := out.AdditionalProperties; ap != nil && ap.Schema != nil {
		r, err := inline(defs, chain, ap.Schema)
		if err != nil {
			return nil, err
		}
		cp := *ap
		cp.Schema = r
		out.AdditionalProperties = &cp
	}
	if it := out.Items; it != nil && it.Schema != nil {
		r, err := inline(defs, chain, it.Schema)
		if err != nil {
			return nil, err
		}
		cp := *it
		cp.Schema = r
		out.Items = &cp
	}
	return &out, nil
}

func refOf(s *spec.Schema) (string, bool) {
	if s.Ref.GetURL() != nil {
		return s.Ref.String(), true
	}
	for i := range s.AllOf {
		if r, ok := refOf(&s.AllOf[i]); ok {
			return r, true
		}
	}
	return "", false
}
