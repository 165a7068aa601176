package crdschema

import (
	"fmt"
	"strconv"
	"strings"
)

// jsonPath is a parsed printer-column path in kubectl's JSONPath dialect:
// ".a.b", ".a[0]", ".a[-1]", ".a[1:3]", ".a[*]", ".a.*", "..a",
// ".a['b.c']", ".a[0,2]", ".a[?(@.type=="Ready")].status", ".a[?(@.x)]",
// with "\." escaping a dot inside a field name and optional "{...}" and "$".
type jsonPath struct{ steps []step }

type stepKind int

const (
	stepField     stepKind = iota // name
	stepWildcard                  // every map value or array element
	stepRecursive                 // the value and all its descendants
	stepUnion                     // bracket selectors
	stepFilter                    // [?(...)]
)

type step struct {
	kind      stepKind
	name      string
	selectors []selector
	filter    *filter
}

type selectorKind int

const (
	selIndex selectorKind = iota
	selSlice
	selName
)

type selector struct {
	kind selectorKind
	// index is the element of selIndex (negative counts from the end).
	index int
	// start, end and stride of selSlice; nil means the default.
	start, end, stride *int
	// name is the key of selName.
	name string
}

type filter struct {
	left  *jsonPath
	op    string // "exists", "==", "!=", "<", ">", "<=", ">="
	right any    // a literal (string, float64, bool) or *jsonPath relative to @
}

// parseJSONPath parses a printer-column path. Errors name the problem and
// the offending text.
func parseJSONPath(text string) (*jsonPath, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	s = strings.TrimPrefix(s, "$")
	p := &jsonPath{}
	if s == "." || s == "" {
		return p, nil
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			if i+1 < len(s) && s[i+1] == '.' {
				p.steps = append(p.steps, step{kind: stepRecursive})
				i++
				if i+1 < len(s) && s[i+1] == '[' {
					i++
					continue
				}
			}
			i++
			if i < len(s) && s[i] == '*' {
				p.steps = append(p.steps, step{kind: stepWildcard})
				i++
				continue
			}
			name, n := scanName(s[i:])
			if name == "" {
				return nil, fmt.Errorf("invalid JSONPath %q: empty field name at offset %d", text, i)
			}
			p.steps = append(p.steps, step{kind: stepField, name: name})
			i += n
		case '[':
			end, err := matchBracket(s, i)
			if err != nil {
				return nil, fmt.Errorf("invalid JSONPath %q: %w", text, err)
			}
			st, err := parseBracket(s[i+1 : end])
			if err != nil {
				return nil, fmt.Errorf("invalid JSONPath %q: %w", text, err)
			}
			p.steps = append(p.steps, st)
			i = end + 1
		default:
			return nil, fmt.Errorf("invalid JSONPath %q: unexpected %q at offset %d", text, s[i], i)
		}
	}
	return p, nil
}

// scanName reads a field name up to the next unescaped terminator and
// returns it unescaped with the number of bytes consumed.
func scanName(s string) (string, int) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(s[i+1])
			i += 2
			continue
		}
		if strings.IndexByte(".,[]$@{} \t", c) >= 0 {
			break
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), i
}

// matchBracket returns the index of the ']' closing the '[' at open,
// skipping quoted strings and parentheses.
func matchBracket(s string, open int) (int, error) {
	depth := 0
	var quote byte
	for i := open + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ']' && depth == 0:
			return i, nil
		}
	}
	return 0, fmt.Errorf("unterminated [ at offset %d", open)
}

func parseBracket(inner string) (step, error) {
	inner = strings.TrimSpace(inner)
	switch {
	case inner == "*":
		return step{kind: stepWildcard}, nil
	case strings.HasPrefix(inner, "?("):
		if !strings.HasSuffix(inner, ")") {
			return step{}, fmt.Errorf("unterminated filter %q", inner)
		}
		f, err := parseFilter(inner[2 : len(inner)-1])
		return step{kind: stepFilter, filter: f}, err
	case inner == "":
		return step{}, fmt.Errorf("empty []")
	}
	var sels []selector
	for _, part := range splitUnion(inner) {
		sel, err := parseSelector(strings.TrimSpace(part))
		if err != nil {
			return step{}, err
		}
		sels = append(sels, sel)
	}
	return step{kind: stepUnion, selectors: sels}, nil
}

// splitUnion splits on commas outside quotes.
func splitUnion(s string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func parseSelector(part string) (selector, error) {
	if len(part) >= 2 && (part[0] == '\'' || part[0] == '"') && part[len(part)-1] == part[0] {
		name, err := unquote(part)
		return selector{kind: selName, name: name}, err
	}
	if strings.Contains(part, ":") {
		bounds := strings.Split(part, ":")
		if len(bounds) > 3 {
			return selector{}, fmt.Errorf("invalid slice %q", part)
		}
		sel := selector{kind: selSlice}
		targets := []**int{&sel.start, &sel.end, &sel.stride}
		for i, b := range bounds {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			n, err := strconv.Atoi(b)
			if err != nil {
				return selector{}, fmt.Errorf("invalid slice bound %q", b)
			}
			*targets[i] = &n
		}
		if sel.stride != nil && *sel.stride <= 0 {
			return selector{}, fmt.Errorf("slice step must be > 0 in %q", part)
		}
		return sel, nil
	}
	n, err := strconv.Atoi(part)
	if err != nil {
		return selector{}, fmt.Errorf("invalid array index %q", part)
	}
	return selector{kind: selIndex, index: n}, nil
}

// unquote accepts single- or double-quoted strings with backslash escapes.
func unquote(s string) (string, error) {
	if s[0] == '\'' {
		s = `"` + strings.ReplaceAll(strings.ReplaceAll(s[1:len(s)-1], `\'`, `'`), `"`, `\"`) + `"`
	}
	out, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("invalid quoted string %s", s)
	}
	return out, nil
}

var filterOps = []string{"==", "!=", "<=", ">=", "<", ">"}

// parseFilter parses "@.path", "@.path op literal" or "@.path op @.path".
func parseFilter(expr string) (*filter, error) {
	expr = strings.TrimSpace(expr)
	op, at := "", -1
	for i := 0; i < len(expr) && at < 0; i++ {
		if expr[i] == '\'' || expr[i] == '"' {
			break
		}
		for _, o := range filterOps {
			if strings.HasPrefix(expr[i:], o) {
				op, at = o, i
				break
			}
		}
	}
	leftText := expr
	if at >= 0 {
		leftText = strings.TrimSpace(expr[:at])
	}
	left, err := parseRelative(leftText)
	if err != nil {
		return nil, err
	}
	if at < 0 {
		return &filter{left: left, op: "exists"}, nil
	}
	right, err := parseOperand(strings.TrimSpace(expr[at+len(op):]))
	if err != nil {
		return nil, err
	}
	return &filter{left: left, op: op, right: right}, nil
}

func parseRelative(s string) (*jsonPath, error) {
	if !strings.HasPrefix(s, "@") {
		return nil, fmt.Errorf("filter operand %q must start with @", s)
	}
	return parseJSONPath(s[1:])
}

func parseOperand(s string) (any, error) {
	switch {
	case s == "":
		return nil, fmt.Errorf("missing filter operand")
	case strings.HasPrefix(s, "@"):
		return parseRelative(s)
	case s[0] == '\'' || s[0] == '"':
		if len(s) < 2 || s[len(s)-1] != s[0] {
			return nil, fmt.Errorf("unterminated string %s", s)
		}
		return unquote(s)
	case s == "true" || s == "false":
		return s == "true", nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid filter operand %q", s)
	}
	return f, nil
}
