package crdschema

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// This file checks x-kubernetes-validations when a CRD is created or
// updated, as kube-apiserver's CRD validation does: the fields of each rule,
// then (when the schema is otherwise sound) each rule compiled in
// Kubernetes' CEL environment, its estimated cost against the
// per-expression limit and the schema's total against the per-CRD limit.

const (
	// staticCostLimit is Kubernetes' limit on one expression's estimated
	// cost (times the number of times it may run).
	staticCostLimit = 10000000
	// staticCRDCostLimit is Kubernetes' limit on the estimated cost of all
	// the rules of one version's schema.
	staticCRDCostLimit = 100000000
)

// validationReasons are the reasons a rule may name, sorted.
var validationReasons = []string{
	string(apiextv1.FieldValueDuplicate), string(apiextv1.FieldValueForbidden),
	string(apiextv1.FieldValueInvalid), string(apiextv1.FieldValueRequired),
}

var newlines = regexp.MustCompile(`[\n\r]+`) // the line breaks of CEL's grammar

// ruleOptions are what a CRD update changes in the checks of one version's
// rules.
type ruleOptions struct {
	// existing are the rules and messageExpressions the CRD had before the
	// update: they compile in the environment of stored expressions (all
	// libraries this server knows), new ones in that of new expressions
	// (the libraries every server of the compatibility window knows).
	existing expressions
	// unchanged is set when the version's schema did not change: the
	// per-expression cost limit is not applied, so that a CRD accepted
	// before keeps being accepted.
	unchanged bool
	// accepted is set for a schema already accepted: its rules are not
	// compiled ahead.
	accepted bool
}

// expressions is a set of rules and a set of messageExpressions.
type expressions struct {
	rules, messages map[string]bool
}

// RuleEnv and MessageExpressionEnv choose the CEL environment of an
// expression (cel.EnvLoader).
func (e expressions) RuleEnv(envSet *environment.EnvSet, expr string) *celgo.Env {
	if e.rules[expr] {
		return envSet.StoredExpressionsEnv()
	}
	return envSet.NewExpressionsEnv()
}

func (e expressions) MessageExpressionEnv(envSet *environment.EnvSet, expr string) *celgo.Env {
	if e.messages[expr] {
		return envSet.StoredExpressionsEnv()
	}
	return envSet.NewExpressionsEnv()
}

// existingExpressions collects the rules and messageExpressions of every
// version schema of crd, at any depth.
func existingExpressions(crd *apiextv1.CustomResourceDefinition) expressions {
	e := expressions{rules: map[string]bool{}, messages: map[string]bool{}}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			walkSchemas(v.Schema.OpenAPIV3Schema, func(s *apiextv1.JSONSchemaProps) {
				for _, r := range s.XValidations {
					e.rules[r.Rule] = true
					if r.MessageExpression != "" {
						e.messages[r.MessageExpression] = true
					}
				}
			})
		}
	}
	return e
}

// walkSchemas calls visit on s and every schema below it.
func walkSchemas(s *apiextv1.JSONSchemaProps, visit func(*apiextv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(s)
	for k := range s.Properties {
		prop := s.Properties[k]
		walkSchemas(&prop, visit)
	}
	if s.AdditionalProperties != nil {
		walkSchemas(s.AdditionalProperties.Schema, visit)
	}
	if s.Items != nil {
		walkSchemas(s.Items.Schema, visit)
		for i := range s.Items.JSONSchemas {
			walkSchemas(&s.Items.JSONSchemas[i], visit)
		}
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walkSchemas(&list[i], visit)
		}
	}
	walkSchemas(s.Not, visit)
}

// checkRuleFields checks the fields of each rule of s (not the
// expressions): a rule is required; message non-empty, on one line, and
// required when the rule spans lines; messageExpression non-empty; reason
// one of the four; fieldPath non-empty, on one line, a path of the schema.
func checkRuleFields(s *apiextv1.JSONSchemaProps, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range s.XValidations {
		rp := p.Child("x-kubernetes-validations").Index(i)
		trimmedRule := strings.TrimSpace(rule.Rule)
		trimmedMsg := strings.TrimSpace(rule.Message)
		switch {
		case trimmedRule == "":
			errs = append(errs, field.Required(rp.Child("rule"), "rule is not specified"))
		case rule.Message != "" && trimmedMsg == "":
			errs = append(errs, field.Invalid(rp.Child("message"), rule.Message, "must be non-empty if specified"))
		case newlines.MatchString(trimmedMsg):
			errs = append(errs, field.Invalid(rp.Child("message"), rule.Message, "must not contain line breaks"))
		case newlines.MatchString(trimmedRule) && trimmedMsg == "":
			errs = append(errs, field.Required(rp.Child("message"), "message must be specified if rule contains line breaks"))
		}
		if rule.MessageExpression != "" && strings.TrimSpace(rule.MessageExpression) == "" {
			errs = append(errs, field.Required(rp.Child("messageExpression"), "messageExpression must be non-empty if specified"))
		}
		if rule.Reason != nil && !contains(validationReasons, string(*rule.Reason)) {
			errs = append(errs, field.NotSupported(rp.Child("reason"), *rule.Reason, validationReasons))
		}
		if rule.FieldPath != "" && strings.TrimSpace(rule.FieldPath) == "" {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), rule.FieldPath, "must be non-empty if specified"))
		}
		if newlines.MatchString(rule.FieldPath) {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), rule.FieldPath, "must not contain line breaks"))
		}
		if rule.FieldPath != "" && !fieldPathValid(s, rule.FieldPath) {
			errs = append(errs, field.Invalid(rp.Child("fieldPath"), rule.FieldPath, "must be a valid path"))
		}
	}
	return errs
}

// fieldPathValid reports whether a rule's fieldPath names a field of s (a
// schema that cannot be read structurally is not held against the path).
func fieldPathValid(s *apiextv1.JSONSchemaProps, path string) bool {
	st, err := toStructural(s)
	if err != nil {
		return true
	}
	_, _, err = cel.ValidFieldPath(path, st)
	return err == nil
}

// ruleChecker compiles the rules of one version's schema and keeps the
// estimated cost of all of them.
type ruleChecker struct {
	envSet *environment.EnvSet
	opts   ruleOptions
	total  uint64
	// expensive are the (at most four) costliest expressions that cost at
	// least 1% of the per-CRD limit, costliest first.
	expensive []ruleCost
	errs      field.ErrorList
}

type ruleCost struct {
	path *field.Path
	cost uint64
}

func newRuleChecker(opts ruleOptions) *ruleChecker {
	return &ruleChecker{envSet: environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), opts: opts}
}

// observe adds an expression's estimated cost to the total.
func (c *ruleChecker) observe(p *field.Path, cost uint64) {
	if math.MaxUint64-c.total < cost {
		c.total = math.MaxUint64
	} else {
		c.total += cost
	}
	if cost < staticCRDCostLimit/100 {
		return
	}
	c.expensive = append(c.expensive, ruleCost{p, cost})
	sort.SliceStable(c.expensive, func(i, j int) bool { return c.expensive[i].cost > c.expensive[j].cost })
	if len(c.expensive) > 4 {
		c.expensive = c.expensive[:4]
	}
}

// totalErrors returns the errors of a schema whose rules together exceed
// the per-CRD cost limit: one per costliest expression, one for the
// schema at p.
func (c *ruleChecker) totalErrors(p *field.Path) field.ErrorList {
	if c == nil || c.total <= staticCRDCostLimit {
		return nil
	}
	var errs field.ErrorList
	for _, e := range c.expensive {
		errs = append(errs, field.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
	}
	return append(errs, field.Forbidden(p, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, staticCRDCostLimit)))
}

// costErrorMessage is Kubernetes' message for an estimated cost over its
// limit.
func costErrorMessage(what string, cost, limit uint64) string {
	factor := float64(cost) / float64(limit)
	var f string
	switch {
	case factor > 100.0:
		f = "more than 100x"
	case factor < 1.5:
		f = fmt.Sprintf("%fx", factor)
	default:
		f = fmt.Sprintf("%.1fx", factor)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", what, f)
}

// timesCardinality multiplies a cost by how often it may run, saturating.
func timesCardinality(cost, cardinality uint64) uint64 {
	if cost == 0 {
		return 0
	}
	if math.MaxUint64/cost < cardinality {
		return math.MaxUint64
	}
	return cost * cardinality
}

// compile compiles the rules of the schema node n (at p), reporting
// compile errors, costs over the per-expression limit, transition rules
// where old values cannot be correlated (below oldSelfForbidden) and
// optionalOldSelf on rules without oldSelf.
func (c *ruleChecker) compile(n *ruleNode, s *apiextv1.JSONSchemaProps, p, oldSelfForbidden *field.Path) {
	vp := p.Child("x-kubernetes-validations")
	info, err := n.typeInfo()
	switch {
	case err != nil:
		c.errs = append(c.errs, field.InternalError(vp, fmt.Errorf("internal error: failed to construct type information for x-kubernetes-validations rules: %s", err)))
		return
	case info == nil:
		c.errs = append(c.errs, field.InternalError(vp, fmt.Errorf("internal error: failed to retrieve type information for x-kubernetes-validations")))
		return
	}
	results, err := cel.Compile(info.schema, info.decl, celconfig.PerCallLimit, c.envSet, c.opts.existing)
	if err != nil {
		c.errs = append(c.errs, field.InternalError(vp, err))
		return
	}
	for i, res := range results {
		c.checkResult(n, res, s.XValidations[i], vp.Index(i), oldSelfForbidden)
	}
}

func (c *ruleChecker) checkResult(n *ruleNode, res cel.CompilationResult, rule apiextv1.ValidationRule, rp, oldSelfForbidden *field.Path) {
	cost := res.MaxCost
	if n.maxCardinality != nil {
		cost = timesCardinality(cost, *n.maxCardinality)
	} else {
		cost = timesCardinality(cost, res.MaxCardinality)
	}
	if !c.opts.unchanged && cost > staticCostLimit {
		c.errs = append(c.errs, field.Forbidden(rp.Child("rule"), costErrorMessage("estimated rule cost", cost, staticCostLimit)))
	}
	c.observe(rp.Child("rule"), cost)
	if res.Error != nil {
		if res.Error.Type == apiservercel.ErrorTypeRequired {
			c.errs = append(c.errs, field.Required(rp.Child("rule"), res.Error.Detail))
		} else {
			c.errs = append(c.errs, field.Invalid(rp.Child("rule"), internalRule(rule), res.Error.Detail))
		}
	}
	switch {
	case res.MessageExpressionError != nil:
		c.errs = append(c.errs, field.Invalid(rp.Child("messageExpression"), internalRule(rule), res.MessageExpressionError.Detail))
	case res.MessageExpression != nil:
		if !c.opts.unchanged && res.MessageExpressionMaxCost > staticCostLimit {
			c.errs = append(c.errs, field.Forbidden(rp.Child("messageExpression"), costErrorMessage("estimated messageExpression cost", res.MessageExpressionMaxCost, staticCostLimit)))
		}
		c.observe(rp.Child("messageExpression"), res.MessageExpressionMaxCost)
	}
	switch {
	case res.UsesOldSelf && oldSelfForbidden != nil:
		c.errs = append(c.errs, field.Invalid(rp.Child("rule"), rule.Rule, fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %v", oldSelfForbidden)))
	case !res.UsesOldSelf && rule.OptionalOldSelf != nil:
		c.errs = append(c.errs, field.Invalid(rp.Child("optionalOldSelf"), *rule.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
	}
}

// internalRule is a rule in the internal form kube-apiserver's messages
// print.
func internalRule(r apiextv1.ValidationRule) apiext.ValidationRule {
	var out apiext.ValidationRule
	if err := apiextv1.Convert_v1_ValidationRule_To_apiextensions_ValidationRule(&r, &out, nil); err != nil {
		return apiext.ValidationRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression, FieldPath: r.FieldPath}
	}
	return out
}
