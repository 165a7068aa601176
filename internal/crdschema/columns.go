package crdschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Columns evaluates additionalPrinterColumns for server-side printing (kubectl get):
// it is immutable after NewColumns and safe for concurrent use.
type Columns struct {
	// headers are the Table column definitions: Name first, then one per
	// entry of paths, in the same order.
	headers []metav1.TableColumnDefinition
	// paths are the parsed jsonPath of each column after Name.
	paths []*jsonPath
}

// NewColumns parses the column definitions. When defs is empty the columns
// are Name and Age (a date column on .metadata.creationTimestamp), as
// Kubernetes serves CRDs without additionalPrinterColumns. An unparsable
// jsonPath is an error naming the column; nothing is returned with it.
func NewColumns(defs []apiextv1.CustomResourceColumnDefinition) (*Columns, error) {
	objectMeta := metav1.ObjectMeta{}.SwaggerDoc()
	if len(defs) == 0 {
		defs = []apiextv1.CustomResourceColumnDefinition{{
			Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: objectMeta["creationTimestamp"],
		}}
	}
	c := &Columns{headers: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: objectMeta["name"]},
	}}
	for _, d := range defs {
		p, err := parseJSONPath(d.JSONPath)
		if err != nil {
			return nil, fmt.Errorf("printer column %q: %w", d.Name, err)
		}
		desc := d.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + d.JSONPath
		}
		c.paths = append(c.paths, p)
		c.headers = append(c.headers, metav1.TableColumnDefinition{
			Name: d.Name, Type: d.Type, Format: d.Format, Description: desc, Priority: d.Priority,
		})
	}
	return c, nil
}

// Definitions returns the meta.k8s.io/v1 Table column definitions: "Name" (format name) first, then the CRD's columns; when
// defs is empty, Name and Age (as Kubernetes does). The slice is a copy.
func (c *Columns) Definitions() []metav1.TableColumnDefinition {
	return append([]metav1.TableColumnDefinition(nil), c.headers...)
}

// Cells returns one row's cells for obj, as Kubernetes' CRD table convertor does: the name; for each column the first
// JSONPath result, typed by the column type (integer → int64, number → float64 or int64, boolean, string; date → a human
// duration like "5m" computed against now); nil for no result. Age = human duration since creationTimestamp.
//
// Typing follows Kubernetes exactly: integer columns take int64 (a float is
// truncated), number columns give float64, boolean columns need a bool, and a
// value of the wrong type is nil. String columns print any value: strings as
// they are, numbers and booleans in Go's default form, maps and arrays as
// JSON, null as "<no value>". Date columns parse RFC 3339 strings and give
// "<invalid>" for anything unparsable. There is always one cell per
// definition.
func (c *Columns) Cells(obj map[string]any, now time.Time) []any {
	cells := make([]any, 1, len(c.headers))
	name := ""
	if meta, ok := obj["metadata"].(map[string]any); ok {
		name, _ = meta["name"].(string)
	}
	cells[0] = name
	for i, p := range c.paths {
		results := p.find(obj)
		if len(results) == 0 {
			cells = append(cells, nil)
			continue
		}
		cells = append(cells, cell(c.headers[i+1].Type, results[0], now))
	}
	return cells
}

func cell(typ string, v any, now time.Time) any {
	if typ == "string" {
		return printString(v)
	}
	if v == nil {
		return nil
	}
	switch typ {
	case "integer":
		switch x := v.(type) {
		case int64:
			return x
		case int:
			return int64(x)
		case float64:
			return int64(x)
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch x := v.(type) {
		case int64:
			return float64(x)
		case int:
			return float64(x)
		case float64:
			return x
		case json.Number:
			if f, err := x.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			return humanDate(s, now)
		}
	}
	return nil
}

// printString renders a value for a string column the way kubectl's
// JSONPath printer does.
func printString(v any) any {
	switch x := v.(type) {
	case nil:
		return "<no value>"
	case string:
		return x
	case map[string]any, []any:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(true)
		if err := enc.Encode(x); err != nil {
			return nil
		}
		return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	default:
		return fmt.Sprint(x)
	}
}

func humanDate(s string, now time.Time) string {
	var t metav1.Time
	if err := t.UnmarshalQueryParameter(s); err != nil {
		return "<invalid>"
	}
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
