package authentication

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

func selfSubjectReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "selfsubjectreviews", Kind: "SelfSubjectReview",
		Singular: "selfsubjectreview",
		New:      func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
		Virtual:  &registry.Virtual{Create: createSelfSubjectReview},
		Attrs:    strategy.Attrs[*authenticationv1.SelfSubjectReview](false, nil),
	}
}

// createSelfSubjectReview answers the user the request runs as, in a new
// object stamped with the time (the body is not validated, and nothing of
// it is kept, as kube-apiserver does).
func createSelfSubjectReview(_ context.Context, env registry.Env, req registry.Request, obj runtime.Object) (runtime.Object, error) {
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectReview: %T", obj))
	}
	if req.User.Name == "" {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(env.Clock().Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(req.User)},
	}, nil
}
