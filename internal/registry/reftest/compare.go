package reftest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// compare reports every difference between a case's answer and its Want.
func compare(t *testing.T, c Case, got Answer) {
	t.Helper()
	want := *c.Want
	if got.Code != want.Code {
		t.Errorf("%s %s: code %d, want %d\n got %s\nwant %s", c.Method, c.Path, got.Code, want.Code, compact(got.Body), compact(want.Body))
		return
	}
	if !slices.Equal(got.Warnings, want.Warnings) {
		t.Errorf("warnings\n got %q\nwant %q", got.Warnings, want.Warnings)
	}
	// Through JSON, so that a Want built in Go compares like a recorded
	// one; the Want is normalized again (its Ignore included), so that
	// one recorded before a rule was added compares by the same rules.
	if g, w := canonical(got.Body), normalize(canonical(want.Body), nil, c.Ignore); !reflect.DeepEqual(g, w) {
		t.Errorf("body differs:\n%s\n got %s\nwant %s", diff(g, w), compact(g), compact(w))
	}
	if g, w := canonical(got.Table), normalize(canonical(want.Table), nil, c.Ignore); !reflect.DeepEqual(g, w) {
		t.Errorf("table differs:\n%s\n got %s\nwant %s", diff(g, w), compact(g), compact(w))
	}
}

func canonical(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return string(b)
	}
	return out
}

// diff lists the leaves that differ, by path, in order.
func diff(got, want any) string {
	g, w := flatten("", got, map[string]string{}), flatten("", want, map[string]string{})
	var lines []string
	for k, v := range w {
		if gv, ok := g[k]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: absent, want %s", k, v))
		} else if gv != v {
			lines = append(lines, fmt.Sprintf("  %s: %s, want %s", k, gv, v))
		}
	}
	for k, v := range g {
		if _, ok := w[k]; !ok {
			lines = append(lines, fmt.Sprintf("  %s: %s, want it absent", k, v))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// flatten lists the leaves of a decoded JSON value by path.
func flatten(prefix string, v any, out map[string]string) map[string]string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[prefix] = "{}"
		}
		for k, e := range x {
			flatten(prefix+"."+k, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[prefix] = "[]"
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		out[prefix] = compact(x)
	}
	return out
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
