package crdschema

// find evaluates the path against a JSON value and returns every match in
// document order (map keys sorted). Missing keys, out-of-range indexes and
// selectors applied to the wrong kind of value match nothing; they are not
// errors, as with kubectl's AllowMissingKeys.
func (p *jsonPath) find(root any) []any {
	current := []any{root}
	for _, st := range p.steps {
		var next []any
		for _, v := range current {
			next = append(next, st.apply(v)...)
		}
		current = next
		if len(current) == 0 {
			return nil
		}
	}
	return current
}

func (st *step) apply(v any) []any {
	switch st.kind {
	case stepField:
		if m, ok := v.(map[string]any); ok {
			if x, found := m[st.name]; found {
				return []any{x}
			}
		}
	case stepWildcard:
		return children(v)
	case stepRecursive:
		return descendants(v, nil)
	case stepUnion:
		var out []any
		for i := range st.selectors {
			out = append(out, st.selectors[i].apply(v)...)
		}
		return out
	case stepFilter:
		list, ok := v.([]any)
		if !ok {
			return nil
		}
		var out []any
		for _, item := range list {
			if st.filter.match(item) {
				out = append(out, item)
			}
		}
		return out
	}
	return nil
}

func children(v any) []any {
	switch x := v.(type) {
	case map[string]any:
		out := make([]any, 0, len(x))
		for _, k := range sortedValueKeys(x) {
			out = append(out, x[k])
		}
		return out
	case []any:
		return append([]any(nil), x...)
	}
	return nil
}

// descendants returns v and everything below it, depth first.
func descendants(v any, acc []any) []any {
	acc = append(acc, v)
	for _, c := range children(v) {
		acc = descendants(c, acc)
	}
	return acc
}

func (sel *selector) apply(v any) []any {
	if sel.kind == selName {
		if m, ok := v.(map[string]any); ok {
			if x, found := m[sel.name]; found {
				return []any{x}
			}
		}
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	n := len(list)
	if sel.kind == selIndex {
		i := sel.index
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil
		}
		return []any{list[i]}
	}
	start, end, stride := 0, n, 1
	if sel.start != nil {
		start = *sel.start
	}
	if sel.end != nil {
		end = *sel.end
	}
	if sel.stride != nil {
		stride = *sel.stride
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(0, min(start, n)), max(0, min(end, n))
	var out []any
	for i := start; i < end; i += stride {
		out = append(out, list[i])
	}
	return out
}

func (f *filter) match(item any) bool {
	lefts := f.left.find(item)
	if f.op == "exists" {
		return len(lefts) > 0
	}
	if len(lefts) != 1 {
		return false
	}
	right := f.right
	if rp, ok := right.(*jsonPath); ok {
		rights := rp.find(item)
		if len(rights) != 1 {
			return false
		}
		right = rights[0]
	}
	return compare(lefts[0], f.op, right)
}

// compare applies a filter operator; numbers compare numerically across
// int64 and float64, strings lexically, booleans only for (in)equality.
// Values of different kinds never match.
func compare(left any, op string, right any) bool {
	if lf, ok := toFloat(left); ok {
		rf, ok := toFloat(right)
		if !ok {
			return false
		}
		return ordered(lf, rf, op)
	}
	switch l := left.(type) {
	case string:
		r, ok := right.(string)
		return ok && ordered(l, r, op)
	case bool:
		r, ok := right.(bool)
		if !ok {
			return false
		}
		switch op {
		case "==":
			return l == r
		case "!=":
			return l != r
		}
	}
	return false
}

func ordered[T float64 | string](l, r T, op string) bool {
	switch op {
	case "==":
		return l == r
	case "!=":
		return l != r
	case "<":
		return l < r
	case ">":
		return l > r
	case "<=":
		return l <= r
	case ">=":
		return l >= r
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
