package openapifacts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Facts are the comment-derived facts of every model of the documents.
type Facts struct {
	Models map[string]*Model
}

// Model holds one definition's facts.
type Model struct {
	// Required is the model's required list (empty: none).
	Required []string
	// MapType is its x-kubernetes-map-type ("atomic" or "").
	MapType string
	// Unions is its x-kubernetes-unions as JSON text, or "".
	Unions string
	// GVKs is its x-kubernetes-group-version-kind list in the Swagger 2.0
	// document, recorded only for the apimachinery meta models
	// (DeleteOptions and WatchEvent list every group-version of
	// kube-apiserver's scheme there, served or not; Status and the
	// discovery documents list core v1).
	GVKs []GVK
	// Props holds the facts of properties that have any.
	Props map[string]*Prop
}

// GVK is one x-kubernetes-group-version-kind entry.
type GVK struct{ Group, Version, Kind string }

// Prop holds one property's facts.
type Prop struct {
	Enum, ItemEnum, ValueEnum []string
	ListType                  string
	ListMapKeys               []string
	MapType                   string
	// Default is the JSON text of its default, or "".
	Default string
}

func (p *Prop) empty() bool { return reflect.DeepEqual(*p, Prop{}) }

// Extract reads the OpenAPI v3 group-version documents and the Swagger 2.0
// document and returns the facts of their models. A model found in several
// v3 documents must have the same facts in each.
func Extract(docs map[string][]byte, v2 []byte) (*Facts, error) {
	f := &Facts{Models: map[string]*Model{}}
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		var doc struct {
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		dec := json.NewDecoder(bytes.NewReader(docs[key]))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("openapifacts: %s: %w", key, err)
		}
		for name, s := range doc.Components.Schemas {
			if !strings.HasPrefix(name, "io.k8s.") {
				continue // a custom resource's model
			}
			m, err := modelFacts(name, s)
			if err != nil {
				return nil, fmt.Errorf("openapifacts: %s: %s: %w", key, name, err)
			}
			if prev, ok := f.Models[name]; ok {
				if !reflect.DeepEqual(prev, m) {
					return nil, fmt.Errorf("openapifacts: %s: %s differs from an earlier document", key, name)
				}
				continue
			}
			f.Models[name] = m
		}
	}
	return f, f.addV2GVKs(v2)
}

// addV2GVKs records the group-version-kind lists of the apimachinery models
// of the Swagger 2.0 document.
func (f *Facts) addV2GVKs(v2 []byte) error {
	var doc struct {
		Definitions map[string]struct {
			GVKs []struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(v2, &doc); err != nil {
		return fmt.Errorf("openapifacts: v2: %w", err)
	}
	for name, d := range doc.Definitions {
		m, ok := f.Models[name]
		if !ok || !strings.HasPrefix(name, "io.k8s.apimachinery.") {
			continue
		}
		for _, g := range d.GVKs {
			m.GVKs = append(m.GVKs, GVK{g.Group, g.Version, g.Kind})
		}
	}
	return nil
}

func modelFacts(name string, s map[string]any) (*Model, error) {
	m := &Model{Props: map[string]*Prop{}}
	var err error
	if m.Required, err = strings_(s["required"]); err != nil {
		return nil, fmt.Errorf("required: %w", err)
	}
	m.MapType, _ = s["x-kubernetes-map-type"].(string)
	if u, ok := s["x-kubernetes-unions"]; ok {
		b, err := json.Marshal(u)
		if err != nil {
			return nil, err
		}
		m.Unions = string(b)
	}
	props, _ := s["properties"].(map[string]any)
	for pname, raw := range props {
		ps, _ := raw.(map[string]any)
		p, err := propFacts(ps)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", pname, err)
		}
		if !p.empty() {
			m.Props[pname] = p
		}
	}
	return m, nil
}

func propFacts(ps map[string]any) (*Prop, error) {
	p := &Prop{}
	var err error
	if p.Enum, err = strings_(ps["enum"]); err != nil {
		return nil, fmt.Errorf("enum: %w", err)
	}
	if items, ok := ps["items"].(map[string]any); ok {
		if p.ItemEnum, err = strings_(items["enum"]); err != nil {
			return nil, fmt.Errorf("items enum: %w", err)
		}
	}
	if values, ok := ps["additionalProperties"].(map[string]any); ok {
		if p.ValueEnum, err = strings_(values["enum"]); err != nil {
			return nil, fmt.Errorf("additionalProperties enum: %w", err)
		}
	}
	p.ListType, _ = ps["x-kubernetes-list-type"].(string)
	if p.ListMapKeys, err = strings_(ps["x-kubernetes-list-map-keys"]); err != nil {
		return nil, fmt.Errorf("list map keys: %w", err)
	}
	p.MapType, _ = ps["x-kubernetes-map-type"].(string)
	if d, ok := ps["default"]; ok {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		p.Default = string(b)
	}
	return p, nil
}

// strings_ converts a JSON array of strings.
func strings_(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list: %v", v)
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("not a string: %v", x)
		}
		out = append(out, s)
	}
	return out, nil
}
