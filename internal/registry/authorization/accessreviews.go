package authorization

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func subjectAccessReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "subjectaccessreviews", Kind: "SubjectAccessReview",
		Singular: "subjectaccessreview",
		New:      func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
		Virtual:  &registry.Virtual{Create: createSubjectAccessReview},
		Attrs:    strategy.Attrs[*authorizationv1.SubjectAccessReview](false, nil),
	}
}

func localSubjectAccessReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview",
		Singular: "localsubjectaccessreview", Namespaced: true,
		New:     func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
		Virtual: &registry.Virtual{Create: createLocalSubjectAccessReview},
		Attrs:   strategy.Attrs[*authorizationv1.LocalSubjectAccessReview](true, nil),
	}
}

func selfSubjectAccessReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview",
		Singular: "selfsubjectaccessreview",
		New:      func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
		Virtual:  &registry.Virtual{Create: createSelfSubjectAccessReview},
		Attrs:    strategy.Attrs[*authorizationv1.SelfSubjectAccessReview](false, nil),
	}
}

func createSubjectAccessReview(ctx context.Context, env registry.Env, _ registry.Request, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SubjectAccessReview: %T", obj))
	}
	errs := validateSubjectSpec(&sar.Spec)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, nil, "must be empty")...)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	sar.Status = decide(ctx, env, subjectUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// createLocalSubjectAccessReview answers a review confined to the
// namespace of its URL (the server gave the object that namespace, or
// refused a different one).
func createLocalSubjectAccessReview(ctx context.Context, env registry.Env, req registry.Request, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a LocaLocalSubjectAccessReview: %T", obj))
	}
	errs := validateSubjectSpec(&sar.Spec)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, func(m *metav1.ObjectMeta) { m.Namespace = "" },
		"must be empty except for namespace")...)
	if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != sar.Namespace {
		errs = append(errs, field.Invalid(resAttrsPath.Child("namespace"), ra.Namespace, "must match metadata.namespace"))
	}
	if sar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(nonResPath, printedNonResource(sar.Spec.NonResourceAttributes), "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	if req.Namespace != sar.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", req.Namespace))
	}
	sar.Status = decide(ctx, env, subjectUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// createSelfSubjectAccessReview answers whether the requesting user may
// do what the review asks.
func createSelfSubjectAccessReview(ctx context.Context, env registry.Env, req registry.Request, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectAccessReview: %T", obj))
	}
	errs := validateAttributes(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	errs = append(errs, validateSelectors(sar.Spec.ResourceAttributes)...)
	errs = append(errs, validateEmptyMeta(sar.ObjectMeta, nil, "must be empty")...)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	if req.User.Name == "" {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	sar.Status = decide(ctx, env, req.User.AuthorizerUser(), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// subjectUser is the user a review about someone else names.
func subjectUser(s *authorizationv1.SubjectAccessReviewSpec) authorizer.User {
	u := authorizer.User{Name: s.User, UID: s.UID, Groups: s.Groups}
	if len(s.Extra) > 0 {
		u.Extra = make(map[string][]string, len(s.Extra))
		for k, v := range s.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// decide asks the server's authorizer about a resource or a non-resource
// request of user, and renders the answer as a review status.
func decide(ctx context.Context, env registry.Env, user authorizer.User,
	res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	a := authorizer.Attributes{User: user}
	if res != nil {
		a.ResourceRequest = true
		a.Verb, a.Namespace, a.APIGroup, a.APIVersion = res.Verb, res.Namespace, res.Group, res.Version
		a.Resource, a.Subresource, a.Name = res.Resource, res.Subresource, res.Name
	} else {
		a.Verb, a.Path = nonRes.Verb, nonRes.Path
	}
	d, reason, err := env.Authorizer().Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{
		Allowed: d == authorizer.DecisionAllow, Denied: d == authorizer.DecisionDeny, Reason: reason,
	}
	var notes []string
	if err != nil {
		notes = append(notes, err.Error())
	}
	st.EvaluationError = strings.Join(append(notes, selectorNotes(res)...), "; ")
	return st
}
