package certificates_test

import (
	"context"
	"crypto/elliptic"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// signerPolicy allows everything until restricted, then the signer verbs
// for one signer domain only ("trusted.example.com/*"); it stands for the
// RBAC authorizer, which does not exist yet.
type signerPolicy struct{ restricted *atomic.Bool }

func (p signerPolicy) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !p.restricted.Load() || a.Resource != "signers" || a.Name == "trusted.example.com/*" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (signerPolicy) RulesFor(context.Context, authorizer.User, string) ([]authorizer.ResourceRule, []authorizer.NonResourceRule, bool, error) {
	return nil, nil, true, nil
}

// TestSignerPermissions checks the writes that need a permission on the
// signer ask the server's authorizer (by name, then by domain wildcard)
// and are refused as kube-apiserver refuses them.
func TestSignerPermissions(t *testing.T) {
	policy := signerPolicy{restricted: new(atomic.Bool)}
	s := reftest.Start(t, testserver.Options{Tune: func(c *apiserver.Config) { c.Authorizer = policy }})
	authority := newCA(t)
	s.Must(t, http.MethodPost, ctbs, ctbBody("example.com:foo:old", "example.com/foo", authority.pem), 201, nil)
	policy.restricted.Store(true)
	for _, signer := range []string{"example.com/foo", "trusted.example.com/foo"} {
		name := strings.ReplaceAll(strings.Split(signer, "/")[0], ".", "-")
		s.Must(t, http.MethodPost, csrs, csrBody(name, requestPEM(t, "alice"), signer, `["client auth"]`), 201, nil)
	}
	s.Must(t, http.MethodPatch, csrs+"/trusted-example-com/approval", `{"status":{"conditions":[{"type":"Approved","status":"True"}]}}`, 200, nil)
	cert := b64([]byte(newCA(t).pem))
	s.Must(t, http.MethodPatch, csrs+"/trusted-example-com/status", `{"status":{"certificate":"`+cert+`"}}`, 200, nil)
	s.Must(t, http.MethodPost, ctbs, ctbBody("trusted.example.com:foo:b", "trusted.example.com/foo", authority.pem), 201, nil)
	s.Must(t, http.MethodPost, ctbs, ctbBody("unsigned", "", authority.pem), 201, nil)
	key := ecKey(t, elliptic.P256())
	s.Must(t, http.MethodPost, pcrs, pcrBody("p", requestDER(t, key, "")), 201, nil)
	denied := `{"status":{"conditions":[{"type":"Denied","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	forbidden := func(resource, name, msg string) *reftest.Answer {
		return reftest.Refusal(apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: resource}, name, errors.New(msg)))
	}
	s.Replay(t, []reftest.Case{{
		Name:    "approve",
		Request: patch(csrs+"/example-com/approval", `{"status":{"conditions":[{"type":"Approved","status":"True"}]}}`),
		Want:    forbidden("certificatesigningrequests", "example-com", `user not permitted to approve requests with signerName "example.com/foo"`),
	}, {
		Name:    "sign",
		Request: patch(csrs+"/example-com/status", `{"status":{"conditions":[{"type":"Failed","status":"True"}]}}`),
		Want:    forbidden("certificatesigningrequests", "example-com", `user not permitted to sign requests with signerName "example.com/foo"`),
	}, {
		Name:    "attest",
		Request: reftest.Request{Method: http.MethodPost, Path: ctbs, Body: []byte(ctbBody("example.com:foo:b", "example.com/foo", authority.pem))},
		Want:    forbidden("clustertrustbundles", "example.com:foo:b", `user not permitted to attest for signerName "example.com/foo"`),
	}, {
		Name:    "sign pod certificate",
		Request: patch(pcrs+"/p/status", denied),
		Want: pcrInvalid("p", field.Forbidden(field.NewPath("spec", "signerName"),
			`User "setpoint-admin" is not permitted to "sign" for signer "example.com/foo"`)),
	}})
	// Writes that change nothing the signer vouches for need no permission.
	s.Must(t, http.MethodPatch, csrs+"/example-com/status", `{"metadata":{"labels":{"a":"b"}}}`, 200, nil)
	s.Must(t, http.MethodPatch, ctbs+"/example.com:foo:old", `{"metadata":{"finalizers":["example.com/keep"]}}`, 200, nil)
	s.Replay(t, []reftest.Case{{
		Name:    "attest on update",
		Request: patch(ctbs+"/example.com:foo:old", `{"metadata":{"labels":{"a":"b"}}}`),
		Want:    forbidden("clustertrustbundles", "example.com:foo:old", `user not permitted to attest for signerName "example.com/foo"`),
	}})
}
