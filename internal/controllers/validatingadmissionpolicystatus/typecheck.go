package validatingadmissionpolicystatus

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/setpoint-dev/setpoint/internal/admissioncel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// maxTypesToCheck is kube's limit on the kinds one policy is checked
// against.
const maxTypesToCheck = 10

// typed is one kind checked against, with its type.
type typed struct {
	gvk  schema.GroupVersionKind
	decl *apiservercel.DeclType
}

// check type-checks the validations of p and returns the warnings kube
// writes in status.typeChecking.expressionWarnings.
func check(ctx context.Context, s *schemas, p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	var kinds []typed
	for _, gvk := range typesToCheck(ctx, s, p) {
		if sch := s.schemaFor(ctx, gvk); sch != nil {
			if d := declType(sch, gvk); d != nil {
				kinds = append(kinds, typed{gvk, d})
			}
		}
	}
	var params *apiservercel.DeclType
	hasParams := p.Spec.ParamKind != nil
	if hasParams {
		if gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion); err == nil {
			gvk := gv.WithKind(p.Spec.ParamKind.Kind)
			if sch := s.schemaFor(ctx, gvk); sch != nil {
				params = declType(sch, gvk)
			}
		}
	}
	checkOne := func(expr string) string {
		var msgs []string
		for _, k := range kinds {
			if issue := compile(k.decl, params, hasParams, p.Spec.Variables, expr); issue != "" {
				msgs = append(msgs, fmt.Sprintf("%v: %s\n", k.gvk, issue))
			}
		}
		return strings.Join(msgs, "\n")
	}
	var out []admissionregistrationv1.ExpressionWarning
	ref := field.NewPath("spec", "validations")
	for i, v := range p.Spec.Validations {
		if w := checkOne(v.Expression); w != "" {
			out = append(out, admissionregistrationv1.ExpressionWarning{FieldRef: ref.Index(i).Child("expression").String(), Warning: w})
		}
		if v.MessageExpression == "" {
			continue
		}
		if w := checkOne(v.MessageExpression); w != "" {
			out = append(out, admissionregistrationv1.ExpressionWarning{FieldRef: ref.Index(i).Child("messageExpression").String(), Warning: w})
		}
	}
	return out
}

func declType(s *spec.Schema, gvk schema.GroupVersionKind) *apiservercel.DeclType {
	d := common.SchemaDeclType(&openapi.Schema{Schema: s}, true)
	if d == nil {
		return nil
	}
	return d.MaybeAssignTypeName(fmt.Sprintf("%s%d", gvk.Kind, time.Now().Nanosecond()))
}

// compile compiles expr with object and oldObject of type object (params
// of type params), after the policy's variables; it returns the issues,
// "" when it compiles.
func compile(object, params *apiservercel.DeclType, hasParams bool, variables []admissionregistrationv1.Variable, expr string) string {
	request, namespace := admissioncel.RequestDeclType(), admissioncel.NamespaceDeclType()
	decls := []*apiservercel.DeclType{namespace, request, object}
	opts := []cel.EnvOption{
		cel.Variable("namespaceObject", namespace.CelType()),
		cel.Variable("request", request.CelType()),
		cel.Variable("object", object.CelType()),
		cel.Variable("oldObject", object.CelType()),
		cel.Variable("authorizer", library.AuthorizerType),
	}
	if hasParams {
		t := cel.DynType
		if params != nil {
			decls, t = append(decls, params), params.CelType()
		}
		opts = append(opts, cel.Variable("params", t))
	}
	vars := apiservercel.NewObjectType("kubernetes.variables", map[string]*apiservercel.DeclField{})
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0), EnvOptions: opts, DeclTypes: decls,
	})
	if err == nil {
		set, err = set.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("variables", vars.CelType())},
			DeclTypes:         []*apiservercel.DeclType{vars},
		})
	}
	if err != nil {
		return ""
	}
	for _, v := range variables {
		var out *cel.Type
		if env, err := set.Env(environment.StoredExpressions); err == nil {
			if ast, issues := env.Compile(v.Expression); issues == nil {
				out = ast.OutputType()
			}
		}
		vars.Fields[v.Name] = apiservercel.NewDeclField(v.Name, admissioncel.DeclType(out), true, nil, nil)
	}
	env, err := set.Env(environment.StoredExpressions)
	if err != nil {
		return ""
	}
	if _, issues := env.Compile(expr); issues != nil {
		return issues.String()
	}
	return ""
}

// typesToCheck lists the kinds of p's resourceRules (no wildcards, no
// subresources), at most maxTypesToCheck, sorted by group, version, kind.
func typesToCheck(ctx context.Context, s *schemas, p *admissionregistrationv1.ValidatingAdmissionPolicy) []schema.GroupVersionKind {
	if p.Spec.MatchConstraints == nil {
		return nil
	}
	gvks := sets.New[schema.GroupVersionKind]()
	count := 0
	for _, rule := range p.Spec.MatchConstraints.ResourceRules {
		groups, versions, resources := noWildcards(rule.APIGroups, "*"), noWildcards(rule.APIVersions, "*"), noWildcards(rule.Resources, "*/")
		if groups == nil || versions == nil {
			continue
		}
		for _, g := range groups {
			for _, v := range versions {
				for _, r := range resources {
					gvk, ok := s.kindFor(ctx, schema.GroupVersionResource{Group: g, Version: v, Resource: r})
					if !ok {
						continue
					}
					gvks.Insert(gvk)
					if count++; count == maxTypesToCheck {
						return sorted(gvks)
					}
				}
			}
		}
	}
	return sorted(gvks)
}

// noWildcards returns items sorted, nil when one of the groups or versions
// holds a wildcard; resources with a wildcard or a subresource are
// skipped.
func noWildcards(items []string, chars string) []string {
	out := make([]string, 0, len(items))
	for _, i := range items {
		if strings.ContainsAny(i, chars) {
			if chars == "*" {
				return nil
			}
			continue
		}
		out = append(out, i)
	}
	sort.Strings(out)
	return out
}

func sorted(s sets.Set[schema.GroupVersionKind]) []schema.GroupVersionKind {
	out := s.UnsortedList()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
