package openapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Encoding dominates the cost of an Update, and an Update follows every
// change of a custom resource definition, which changes one group-version.
// So each OpenAPI v3 document is filed under a key naming everything its
// bytes depend on, and the next Update reuses the documents whose key did
// not change instead of encoding them again.
//
// A document's bytes are a function of: the info.version; the routes of
// its group-version, which depend only on the fields of its kinds' Resource
// descriptors written into the key; and the definitions it refers to. A
// definition of a Go type depends only on the type and on the GVKs Go types
// are served as (plan.typedKey); a custom resource's models depend on its
// names and its Schema, which registry.Resource promises is never modified
// once built, so its address identifies it. The address is safe as a key:
// the snapshot holding the keyed documents holds the plan, which holds the
// Schema, so the address cannot be reused while the key is in use.

// typedKey describes every GVK claimed by a Go type, in a fixed order.
func typedKey(p *plan) string {
	lines := make([]string, 0, len(p.kinds))
	for t, gvks := range p.kinds {
		parts := make([]string, len(gvks))
		for i, gvk := range gvks {
			parts[i] = gvk.String()
		}
		lines = append(lines, ModelName(t)+"="+strings.Join(parts, ";"))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// docKey returns the reuse key of g's document, whose definitions are
// closure.
func (p *plan) docKey(version string, g *groupVersion, closure map[string]*spec.Schema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %q\n%s\n", version, p.typedKey)
	for _, k := range g.kinds {
		writeKindKey(&b, k)
	}
	var customs []string
	for name := range closure {
		if _, ok := p.customModels[name]; ok {
			customs = append(customs, name)
		}
	}
	slices.Sort(customs)
	for _, name := range customs {
		b.WriteString("model " + name + ": ")
		writeKindKey(&b, p.customModels[name])
	}
	return b.String()
}

// writeKindKey writes the descriptor fields that routes and models read.
func writeKindKey(b *strings.Builder, k kindInfo) {
	r := k.r
	fmt.Fprintf(b, "%q %q %q %q %q ns=%t status=%t scale=%t subresources=%s verbs=%v custom=%t deleted=%t %q %q",
		r.Group, r.Version, r.Resource, r.Kind, r.ListKind, r.Namespaced, r.Status != nil, r.Scale != nil,
		subresourceKey(r), r.Verbs(), r.Unstructured, r.ReturnDeletedObject, modelKey(k.obj), modelKey(k.objList))
	if r.Unstructured {
		fmt.Fprintf(b, " schema=%p", r.Schema)
	}
	b.WriteByte('\n')
}

// subresourceKey names the kind's own subresources and their shapes.
func subresourceKey(r *registry.Resource) string {
	var b strings.Builder
	for _, sr := range r.Subresources {
		fmt.Fprintf(&b, "%s:%v:%v:%t:%t:%t;", sr.Name, sr.Kind, sr.Verbs, sr.Update != nil, sr.Action != nil, sr.Connect != nil)
	}
	return b.String()
}

func modelKey(m model) string {
	if m.t != nil {
		return ModelName(m.t)
	}
	return m.name
}
