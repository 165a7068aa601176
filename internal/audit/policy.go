package audit

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// LoadPolicyFile reads and checks a policy file (YAML or JSON), as
// kube-apiserver's --audit-policy-file.
func LoadPolicyFile(path string, log *slog.Logger) (*Policy, error) {
	if path == "" {
		return nil, errors.New("file path not specified")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %q: %w", path, err)
	}
	p, err := ParsePolicy(data, log)
	if err != nil {
		return nil, fmt.Errorf("%v: from file %v", err, path)
	}
	return p, nil
}

// ParsePolicy decodes and validates a policy. As kube-apiserver, unknown
// or duplicate fields are tolerated with a warning (strict decoding first,
// then lenient); apiVersion must be audit.k8s.io/v1 and kind Policy; a
// policy without rules is refused.
func ParsePolicy(data []byte, log *slog.Logger) (*Policy, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &Policy{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		p = &Policy{}
		if lerr := yaml.Unmarshal(data, p); lerr != nil {
			return nil, fmt.Errorf("failed decoding: %w", lerr)
		}
		log.Warn("Audit policy contains errors, falling back to lenient decoding", "err", err)
	}
	switch {
	case p.Kind == "":
		return nil, errors.New("failed decoding: Object 'Kind' is missing")
	case p.APIVersion != GroupVersion:
		return nil, fmt.Errorf("unknown group version field %s, Kind=%s in policy", p.APIVersion, p.Kind)
	case p.Kind != "Policy":
		return nil, fmt.Errorf("failed decoding: no kind %q is registered for version %q", p.Kind, p.APIVersion)
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, errors.New("loaded illegal policy with 0 rules")
	}
	return p, nil
}

var (
	levelNames = []string{string(LevelNone), string(LevelMetadata), string(LevelRequest), string(LevelRequestResponse)}
	stageNames = []string{string(StageRequestReceived), string(StageResponseStarted), string(StageResponseComplete), string(StagePanic)}
)

// validatePolicy checks a policy with kube-apiserver's field paths and
// messages.
func validatePolicy(p *Policy) field.ErrorList {
	errs := validateOmitStages(p.OmitStages, field.NewPath("omitStages"))
	for i, r := range p.Rules {
		errs = append(errs, validateRule(r, field.NewPath("rules").Index(i))...)
	}
	return errs
}

func validateRule(r PolicyRule, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Level {
	case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
	case "":
		errs = append(errs, field.Required(fp.Child("level"), ""))
	default:
		errs = append(errs, field.NotSupported(fp.Child("level"), r.Level, levelNames))
	}
	for i, u := range r.NonResourceURLs {
		if u == "*" {
			continue
		}
		if !strings.HasPrefix(u, "/") {
			errs = append(errs, field.Invalid(fp.Child("nonResourceURLs").Index(i), u, "non-resource URL rules must begin with a '/' character"))
		}
		if u != "" && strings.ContainsRune(u[:len(u)-1], '*') {
			errs = append(errs, field.Invalid(fp.Child("nonResourceURLs").Index(i), u, "non-resource URL wildcards '*' must be the final character of the rule"))
		}
	}
	for _, gr := range r.Resources {
		if gr.Group != "" && gr.Group != "*" {
			if msgs := validation.NameIsDNSSubdomain(gr.Group, false); len(msgs) > 0 {
				errs = append(errs, field.Invalid(fp.Child("resources").Child("group"), gr.Group, strings.Join(msgs, ",")))
			}
		}
		if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
			errs = append(errs, field.Invalid(fp.Child("resources").Child("resourceNames"), gr.ResourceNames, "using resourceNames requires at least one resource"))
		}
	}
	errs = append(errs, validateOmitStages(r.OmitStages, fp.Child("omitStages"))...)
	if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
		errs = append(errs, field.Invalid(fp.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
	}
	return errs
}

func validateOmitStages(stages []Stage, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(allStages, s) {
			errs = append(errs, field.Invalid(fp.Index(i), string(s), "allowed stages are "+strings.Join(stageNames, ",")))
		}
	}
	return errs
}

// RequestConfig is what the policy says of one request.
type RequestConfig struct {
	Level             Level
	OmitStages        []Stage
	OmitManagedFields bool
}

// Evaluate returns the configuration of the first rule matching a (the
// policy's omitted stages added to the rule's); no match is level None.
func (p *Policy) Evaluate(a authorizer.Attributes) RequestConfig {
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.matches(a) {
			omf := p.OmitManagedFields
			if r.OmitManagedFields != nil {
				omf = *r.OmitManagedFields
			}
			return RequestConfig{Level: r.Level, OmitStages: unionStages(p.OmitStages, r.OmitStages), OmitManagedFields: omf}
		}
	}
	return RequestConfig{Level: LevelNone, OmitStages: p.OmitStages, OmitManagedFields: p.OmitManagedFields}
}

func unionStages(a, b []Stage) []Stage {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func (r *PolicyRule) matches(a authorizer.Attributes) bool {
	if len(r.Users) > 0 && !slices.Contains(r.Users, a.User.Name) {
		return false
	}
	if len(r.UserGroups) > 0 && !slices.ContainsFunc(a.User.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return r.matchesResource(a)
	}
	if len(r.NonResourceURLs) > 0 {
		return !a.ResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches: "*", the exact path, or a prefix when spec ends in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	return strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

func (r *PolicyRule) matchesResource(a authorizer.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined = a.Resource + "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == "*" || res == combined:
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
