package authorization

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func selfSubjectRulesReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "selfsubjectrulesreviews", Kind: "SelfSubjectRulesReview",
		Singular: "selfsubjectrulesreview",
		New:      func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
		Virtual:  &registry.Virtual{Create: createSelfSubjectRulesReview},
		Attrs:    strategy.Attrs[*authorizationv1.SelfSubjectRulesReview](false, nil),
	}
}

// createSelfSubjectRulesReview answers the rules the requesting user holds
// in spec.namespace, in a new object (kube-apiserver answers neither the
// metadata nor the spec it was sent).
func createSelfSubjectRulesReview(ctx context.Context, env registry.Env, req registry.Request, obj runtime.Object) (runtime.Object, error) {
	r, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectRulesReview: %T", obj))
	}
	if req.User.Name == "" {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	if r.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	res, nonRes, incomplete, err := env.Authorizer().RulesFor(ctx, req.User.AuthorizerUser(), r.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    make([]authorizationv1.ResourceRule, len(res)),
		NonResourceRules: make([]authorizationv1.NonResourceRule, len(nonRes)),
		Incomplete:       incomplete,
	}}
	for i, rule := range res {
		out.Status.ResourceRules[i] = authorizationv1.ResourceRule{
			Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames,
		}
	}
	for i, rule := range nonRes {
		out.Status.NonResourceRules[i] = authorizationv1.NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}
