package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// caseFile is one testdata/cases/<group>_<resource>.yaml file: the kind's
// own cases (and _generic.yaml's, which has only Cases).
type caseFile struct {
	// Resource is the resource id, "apps/v1/deployments".
	Resource string `json:"resource"`
	// Sample replaces the resource's sample of samples.yaml.
	Sample map[string]any `json:"sample"`
	// NameFormat names a case's object: "{case}" (default) is the case
	// name, "{n}" the case's number in the file (1-based); "none" leaves
	// the object without a name (reviews refuse one).
	NameFormat string `json:"nameFormat"`
	// SkipGeneric lists generic cases (globs) that do not apply.
	SkipGeneric []string `json:"skipGeneric"`
	// Masks are extra path globs of values the servers allocate.
	Masks []string `json:"masks"`
	// SettleCondition names a status condition the server's own
	// controllers set True on a new object (the CRD controller's
	// Established): cases on an existing object wait for it first.
	SettleCondition string `json:"settleCondition"`
	// Setup are objects created (on both sides, in the resource's
	// namespace when namespaced) before the cases run.
	Setup []map[string]any `json:"setup"`
	Cases []caseSpec       `json:"cases"`

	path string
}

// caseSpec is one case; see testdata/cases/_generic.yaml for the fields.
type caseSpec struct {
	Name        string         `json:"name"`
	Op          string         `json:"op"`
	Scope       string         `json:"scope"`
	Base        map[string]any `json:"base"`
	Patch       any            `json:"patch"`
	Body        *string        `json:"body"`
	Query       string         `json:"query"`
	ContentType string         `json:"contentType"`
	PatchType   string         `json:"patchType"`
	Subresource string         `json:"subresource"`
	Want        string         `json:"want"`
}

func readCaseFile(path string) (*caseFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &caseFile{path: path}
	if err := yaml.UnmarshalStrict(j, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Decode again with exact numbers for the JSON values.
	raw, _ := difftest.DecodeJSON(j).(map[string]any)
	if s, ok := raw["sample"].(map[string]any); ok {
		f.Sample = s
	}
	if setup, ok := raw["setup"].([]any); ok {
		f.Setup = f.Setup[:0]
		for _, o := range setup {
			f.Setup = append(f.Setup, o.(map[string]any))
		}
	}
	cases, _ := raw["cases"].([]any)
	seen := map[string]bool{}
	for i := range f.Cases {
		c := cases[i].(map[string]any)
		f.Cases[i].Patch = c["patch"]
		if b, ok := c["base"].(map[string]any); ok {
			f.Cases[i].Base = b
		}
		if seen[f.Cases[i].Name] {
			return nil, fmt.Errorf("%s: case %q twice", path, f.Cases[i].Name)
		}
		seen[f.Cases[i].Name] = true
		if f.Cases[i].Want == "" {
			return nil, fmt.Errorf("%s: case %q has no want", path, f.Cases[i].Name)
		}
	}
	return f, nil
}

// readCaseFiles reads every per-resource case file, by resource id.
func readCaseFiles() (map[string]*caseFile, error) {
	paths, err := filepath.Glob("testdata/cases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]*caseFile{}
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "_") {
			continue
		}
		f, err := readCaseFile(p)
		if err != nil {
			return nil, err
		}
		if f.Resource == "" {
			return nil, fmt.Errorf("%s: no resource", p)
		}
		if want := caseFileName(f.Resource); filepath.Base(p) != want {
			return nil, fmt.Errorf("%s: the file of %s is named %s", p, f.Resource, want)
		}
		out[f.Resource] = f
	}
	return out, nil
}

// caseFileName is the file name of a resource's cases: <group>_<resource>.yaml
// ("core" for the legacy group), with the version when the group serves
// the resource in several ("autoscaling_v1_horizontalpodautoscalers.yaml").
func caseFileName(id string) string {
	parts := strings.Split(id, "/")
	if parts[0] == "autoscaling" && parts[1] == "v1" {
		return parts[0] + "_" + parts[1] + "_" + parts[2] + ".yaml"
	}
	return parts[0] + "_" + parts[2] + ".yaml"
}

// wantMatches checks a case's want against a code: "201", "2xx", "4xx",
// "*", or alternatives "200|201".
func wantMatches(want string, code int) bool {
	for _, w := range strings.Split(want, "|") {
		c := fmt.Sprint(code)
		switch {
		case w == "*", w == c:
			return true
		case len(w) == 3 && strings.HasSuffix(w, "xx") && w[0] == c[0]:
			return true
		}
	}
	return false
}

// mergePatch applies an RFC 7386 JSON merge patch to a copy of target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return difftest.Clone(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	} else {
		t = difftest.Clone(t).(map[string]any)
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p[k] == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], p[k])
	}
	return t
}

// namespaceFor is the namespace of a resource's cases.
func namespaceFor(id string) string {
	parts := strings.Split(id, "/")
	g := strings.NewReplacer(".k8s.io", "", ".", "-").Replace(parts[0])
	if caseFileName(id) != parts[0]+"_"+parts[2]+".yaml" {
		g += "-" + parts[1] // a group serving the resource in several versions
	}
	ns := "c-" + g + "-" + parts[2]
	if len(ns) > 63 {
		ns = ns[:63]
	}
	return strings.TrimRight(ns, "-")
}
