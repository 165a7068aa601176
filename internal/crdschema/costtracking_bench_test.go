package crdschema

import (
	"context"
	"testing"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/setpoint-dev/setpoint/internal/celbench"
)

// BenchmarkRulesCostTracking sizes what cel-go's runtime cost tracking
// costs in the ten rules of celbench.TenRules: the rules compiled in a
// plain cel-go environment that declares self as dyn and carries the
// libraries they call, run through setpoint's value adapter, once with
// Kubernetes' cost options (per-call limit, its call cost estimator,
// has() free) and once without.
//
// It is a measurement, not an evaluator: ValidateRules cannot run
// untracked, because Kubernetes' base CEL environment
// (k8s.io/apiserver/pkg/cel/environment) adds cost tracking and the
// per-call limit as program options of the environment itself, so every
// program built from it tracks cost, and an untracked program would need a
// copy of that environment or of cel-go's program construction (whose
// libraries bring program options of their own, such as the optional
// library's or/orValue decorator and the regex library's optimizations).
func BenchmarkRulesCostTracking(b *testing.B) {
	s := compile(b, celbench.Schema(celbench.TenRules))
	obj := object(b, benchRulesObject)
	spec := s.ruleValidator().properties["spec"]
	env, err := celgo.NewEnv(celgo.Variable("self", celgo.DynType), celgo.HomogeneousAggregateLiterals(),
		celgo.DefaultUTCTimeZone(true), ext.Strings(ext.StringsVersion(2)), library.URLs(), library.Regex(),
		library.Quantity(), celgo.OptionalTypes(), celgo.CostEstimatorOptions(checker.PresenceTestHasCost(false)))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cost []celgo.ProgramOption
	}{
		{"tracked", []celgo.ProgramOption{celgo.CostLimit(celconfig.PerCallLimit), celgo.CostTracking(&library.CostEstimator{}),
			celgo.CostTrackerOptions(interpreter.PresenceTestHasCost(false))}},
		{"untracked", nil},
	} {
		progs := make([]celgo.Program, 0, len(spec.rules))
		for _, r := range spec.rules {
			ast, iss := env.Compile(r.Rule)
			if iss.Err() != nil {
				b.Fatal(iss.Err())
			}
			opts := append([]celgo.ProgramOption{celgo.EvalOptions(celgo.OptOptimize), celgo.InterruptCheckFrequency(celconfig.CheckFrequency)}, c.cost...)
			p, err := env.Program(ast, opts...)
			if err != nil {
				b.Fatal(err)
			}
			progs = append(progs, p)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			ctx := context.Background()
			for range b.N {
				act := &ruleActivation{self: toVal(obj["spec"], spec.self)}
				for _, p := range progs {
					if v, _, err := p.ContextEval(ctx, act); err != nil || v.Value() != true {
						b.Fatalf("rule: %v, %v", v, err)
					}
				}
			}
		})
	}
}
