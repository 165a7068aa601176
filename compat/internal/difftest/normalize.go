package difftest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Replacement rewrites every match of Pattern in every string.
type Replacement struct {
	Pattern *regexp.Regexp
	With    string
}

// Normalization says what to rewrite beyond the rules every answer gets.
type Normalization struct {
	// Masks are path globs (see Glob) whose values, where present, become
	// "<masked>": values a server allocates (cluster IPs, node ports).
	Masks []string
	// Replace rewrites substrings of every string.
	Replace []Replacement
	// User, when set, is the name the request was sent as: a string
	// equal to it (a CertificateSigningRequest's spec.username, a review's
	// userInfo) becomes "<user>", as each side's admin has its own name.
	User string
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	// rvInMessages are the messages that name a server's current
	// resourceVersion (a failed precondition, a too old watch).
	// binaryName is the manager name kube-apiserver gives its own writes:
	// its executable's name, which the reference's build cache suffixes
	// with a hash (kube-apiserver-0071e165065f).
	binaryName   = regexp.MustCompile(`^kube-apiserver-[0-9a-f]{12}$`)
	rvInMessages = []Replacement{
		{regexp.MustCompile(`(ResourceVersion in record) \(\d+\)`), "$1 (<rv>)"},
		{regexp.MustCompile(`(ResourceVersion in (?:object )?meta): \d+`), "$1: <rv>"},
		{regexp.MustCompile(`too old resource version: (\d+) \(\d+\)`), "too old resource version: $1 (<rv>)"},
		{regexp.MustCompile(`(Too large resource version: \d+, current:) \d+`), "$1 <rv>"},
	}
)

// Normalize rewrites, in place, what two servers legitimately answer
// differently, and returns v:
//   - every non-empty "resourceVersion" value becomes "<rv>", a non-empty
//     list "continue" token "<continue>";
//   - a name generated from metadata.generateName (the prefix and five
//     random characters) becomes prefix+"<random>", wherever it appears;
//   - UUIDs inside strings become "<uid>", a server's resourceVersion in
//     the messages that name one "<rv>";
//   - timestamps within two days of now inside strings become "<time>"
//     ("<time.N>" with N fraction digits), so their format still counts;
//   - kube-apiserver's own manager name loses its build-cache suffix, and
//     managedFields entries are sorted (see sortManagedFields);
//   - a string that is n.User (the sender's name) becomes "<user>";
//   - then n's masks and replacements.
func Normalize(v any, n Normalization) any {
	generated := map[string]string{}
	collectGenerated(v, generated)
	now := time.Now()
	var walk func(path string, v any) any
	walk = func(path string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				p := JoinKey(path, k)
				switch s, isStr := val.(string); {
				case isStr && s != "" && k == "resourceVersion":
					x[k] = "<rv>"
				case isStr && s != "" && k == "continue":
					x[k] = "<continue>"
				case isStr && k == "manager" && binaryName.MatchString(s):
					x[k] = "kube-apiserver"
				case isStr && n.User != "" && s == n.User:
					x[k] = "<user>"
				case k == "managedFields":
					x[k] = sortManagedFields(walk(p, val))
				default:
					x[k] = walk(p, val)
				}
				if matchAny(n.Masks, p) && x[k] != nil {
					x[k] = "<masked>"
				}
			}
			return x
		case []any:
			for i := range x {
				p := path + "[" + strconv.Itoa(i) + "]"
				if s, ok := x[i].(string); ok && n.User != "" && s == n.User {
					x[i] = "<user>"
				}
				x[i] = walk(p, x[i])
				if matchAny(n.Masks, p) {
					x[i] = "<masked>"
				}
			}
			return x
		case string:
			return normalizeString(x, generated, now, n.Replace)
		}
		return v
	}
	return walk("", v)
}

func normalizeString(s string, generated map[string]string, now time.Time, repl []Replacement) string {
	for name, norm := range generated {
		if strings.Contains(s, name) {
			s = strings.ReplaceAll(s, name, norm)
		}
	}
	s = uuidRE.ReplaceAllString(s, "<uid>")
	for _, r := range rvInMessages {
		s = r.Pattern.ReplaceAllString(s, r.With)
	}
	s = timeRE.ReplaceAllStringFunc(s, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil || t.Sub(now).Abs() > 48*time.Hour {
			return m
		}
		if i := strings.IndexByte(m, '.'); i >= 0 {
			frac := strings.IndexFunc(m[i+1:], func(r rune) bool { return r < '0' || r > '9' })
			return "<time." + strconv.Itoa(frac) + ">"
		}
		return "<time>"
	})
	for _, r := range repl {
		s = r.Pattern.ReplaceAllString(s, r.With)
	}
	return s
}

// sortManagedFields orders managedFields entries by manager, operation
// and subresource: servers order them by time first, and the times of two
// writes in one second (normalized away) tie.
func sortManagedFields(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return fmt.Sprint(m["manager"], "\x00", m["operation"], "\x00", m["subresource"])
	}
	sort.SliceStable(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
	return list
}

// collectGenerated finds every metadata whose name was generated from its
// generateName.
func collectGenerated(v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if prefix, ok := x["generateName"].(string); ok && prefix != "" {
			if name, ok := x["name"].(string); ok && strings.HasPrefix(name, prefix) && len(name) == len(prefix)+5 {
				out[name] = prefix + "<random>"
			}
		}
		for _, val := range x {
			collectGenerated(val, out)
		}
	case []any:
		for _, val := range x {
			collectGenerated(val, out)
		}
	}
}

// Glob matching: '*' matches any run of characters (dots and brackets
// included), "{a,b}" either alternative (braces without a comma match
// themselves); everything else matches itself.
var globCache sync.Map // string -> *regexp.Regexp

// Glob reports whether s matches the pattern.
func Glob(pattern, s string) bool {
	if pattern == "*" {
		return true
	}
	re, ok := globCache.Load(pattern)
	if !ok {
		re, _ = globCache.LoadOrStore(pattern, regexp.MustCompile("^"+globRegexp(pattern)+"$"))
	}
	return re.(*regexp.Regexp).MatchString(s)
}

func globRegexp(pattern string) string {
	var b strings.Builder
	for len(pattern) > 0 {
		switch c := pattern[0]; {
		case c == '*':
			b.WriteString(".*")
			pattern = pattern[1:]
		case c == '{' && strings.IndexByte(pattern, '}') > 0 && strings.Contains(pattern[:strings.IndexByte(pattern, '}')], ","):
			end := strings.IndexByte(pattern, '}')
			alts := strings.Split(pattern[1:end], ",")
			for i, a := range alts {
				alts[i] = globRegexp(a)
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			pattern = pattern[end+1:]
		default:
			next := strings.IndexAny(pattern, "*{")
			if next < 0 {
				next = len(pattern)
			}
			if next == 0 {
				next = 1
			}
			b.WriteString(regexp.QuoteMeta(pattern[:next]))
			pattern = pattern[next:]
		}
	}
	return b.String()
}

func matchAny(globs []string, s string) bool {
	for _, g := range globs {
		if Glob(g, s) {
			return true
		}
	}
	return false
}

// Clone deep-copies a decoded JSON value.
func Clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = Clone(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = Clone(val)
		}
		return out
	}
	return v
}

// Number is a JSON number value.
func Number(n int) json.Number { return json.Number(strconv.Itoa(n)) }
