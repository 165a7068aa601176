package difftest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// absent stands for a value one side does not have.
type absent struct{}

// Absent is the value of a Change side that lacks the path.
var Absent any = absent{}

// Change is one differing leaf (or subtree present on one side only).
type Change struct {
	Path    string
	Ref, SP any
}

// Diff compares two decoded JSON values and returns their differences, one
// per differing leaf, in path order. Objects are compared key by key;
// arrays index by index (use KeyBy first where order does not matter).
func Diff(ref, sp any) []Change {
	var out []Change
	diff("", ref, sp, &out)
	return out
}

func diff(path string, a, b any, out *[]Change) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range unionKeys(am, bm) {
			av, ain := am[k]
			bv, bin := bm[k]
			p := JoinKey(path, k)
			switch {
			case !ain:
				*out = append(*out, Change{p, Absent, bv})
			case !bin:
				*out = append(*out, Change{p, av, Absent})
			default:
				diff(p, av, bv, out)
			}
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		for i := 0; i < len(al) || i < len(bl); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(al):
				*out = append(*out, Change{p, Absent, bl[i]})
			case i >= len(bl):
				*out = append(*out, Change{p, al[i], Absent})
			default:
				diff(p, al[i], bl[i], out)
			}
		}
		return
	}
	if !equalScalar(a, b) {
		*out = append(*out, Change{path, a, b})
	}
}

func equalScalar(a, b any) bool {
	if an, ok := a.(json.Number); ok {
		if bn, ok := b.(json.Number); ok {
			return numEqual(an, bn)
		}
		return false
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	switch b.(type) {
	case map[string]any, []any, json.Number:
		return false
	}
	return a == b
}

func numEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	af, aerr := a.Float64()
	bf, berr := b.Float64()
	return aerr == nil && berr == nil && af == bf
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// JoinKey appends an object key to a path: ".key", or ["key"] when the
// key is not a plain identifier.
func JoinKey(path, key string) string {
	if plainKey.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// KeyBy turns a list of objects into an object keyed by the value of key
// (items without it keep their index as key), so that two lists are
// compared element by element regardless of order.
func KeyBy(list any, key string) any {
	l, ok := list.([]any)
	if !ok {
		return list
	}
	out := make(map[string]any, len(l))
	for i, item := range l {
		k := strconv.Itoa(i)
		if m, ok := item.(map[string]any); ok {
			if v, ok := m[key].(string); ok {
				k = v
			}
		}
		if _, dup := out[k]; dup {
			k = fmt.Sprintf("%s#%d", k, i)
		}
		out[k] = item
	}
	return out
}

// Render is the compact one-line form of a value in a report, at most
// limit bytes.
func Render(v any, limit int) string {
	if v == Absent {
		return "<absent>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := string(b)
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return s
}

// Get returns the value at a dotted path of plain keys ("metadata.name")
// in a decoded JSON value, or nil.
func Get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Delete removes the value at a dotted path of plain keys, if present.
func Delete(v any, path string) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		v = m[k]
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, keys[len(keys)-1])
	}
}
