package certificates

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

const group = "certificates.k8s.io"

// allowedForSigner asks the server's authorizer whether user may verb
// ("approve", "sign", "attest") for signerName, or for every signer of its
// domain ("example.com/*"), as kube-apiserver's certificate admission does.
func allowedForSigner(ctx context.Context, env registry.Env, user registry.UserInfo, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		d, _, err := env.Authorizer().Authorize(ctx, authorizer.Attributes{
			User: user.AuthorizerUser(), Verb: verb, ResourceRequest: true,
			APIGroup: group, APIVersion: "*", Resource: "signers", Name: name,
		})
		if err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}

// forbidden is the 403 of kube-apiserver's admission on resource.
func forbidden(resource, name string, format string, args ...any) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: resource}, name, fmt.Errorf(format, args...))
}
