package authentication

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

const group = "authentication.k8s.io"

// APIAudience is the audience static tokens are valid for: the API
// server's, which kube-apiserver takes from its service-account issuer
// (this is its conventional default).
const APIAudience = "https://kubernetes.default.svc.cluster.local"

func tokenReviewsResource() *registry.Resource {
	return &registry.Resource{
		Group: group, Version: "v1", Resource: "tokenreviews", Kind: "TokenReview", Singular: "tokenreview",
		New:     func() runtime.Object { return &authenticationv1.TokenReview{} },
		Virtual: &registry.Virtual{Create: createTokenReview},
		Attrs:   strategy.Attrs[*authenticationv1.TokenReview](false, nil),
	}
}

// createTokenReview authenticates spec.token for spec.audiences (the API
// audience when none) and answers the review with the result.
func createTokenReview(ctx context.Context, env registry.Env, _ registry.Request, obj runtime.Object) (runtime.Object, error) {
	tr, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	user, auds, err := env.AuthenticateToken(ctx, tr.Spec.Token, tr.Spec.Audiences)
	tr.Status.Authenticated = err == nil
	if err != nil {
		tr.Status.Error = err.Error()
		return tr, nil
	}
	tr.Status.User = userInfo(user)
	tr.Status.Audiences = auds
	return tr, nil
}

// userInfo renders a user as the reviews do (extra always a map).
func userInfo(u registry.UserInfo) authenticationv1.UserInfo {
	out := authenticationv1.UserInfo{
		Username: u.Name, UID: u.UID, Groups: u.Groups,
		Extra: make(map[string]authenticationv1.ExtraValue, len(u.Extra)),
	}
	for k, v := range u.Extra {
		out.Extra[k] = v
	}
	return out
}
