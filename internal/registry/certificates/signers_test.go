package certificates_test

import (
	"context"
	"crypto/elliptic"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry/registrytest/apitest"
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
	s := testserver.Start(t, testserver.Options{Tune: func(c *apiserver.Config) { c.Authorizer = policy }})
	authority := newCA(t)
	apitest.Must(t, s, http.MethodPost, ctbs, ctbBody("example.com:foo:old", "example.com/foo", authority.pem), 201, nil)
	policy.restricted.Store(true)
	for _, signer := range []string{"example.com/foo", "trusted.example.com/foo"} {
		name := strings.ReplaceAll(strings.Split(signer, "/")[0], ".", "-")
		apitest.Must(t, s, http.MethodPost, csrs, csrBody(name, requestPEM(t, "alice"), signer, `["client auth"]`), 201, nil)
	}
	apitest.Must(t, s, http.MethodPatch, csrs+"/trusted-example-com/approval", `{"status":{"conditions":[{"type":"Approved","status":"True"}]}}`, 200, nil)
	cert := b64([]byte(newCA(t).pem))
	apitest.Must(t, s, http.MethodPatch, csrs+"/trusted-example-com/status", `{"status":{"certificate":"`+cert+`"}}`, 200, nil)
	apitest.Must(t, s, http.MethodPost, ctbs, ctbBody("trusted.example.com:foo:b", "trusted.example.com/foo", authority.pem), 201, nil)
	apitest.Must(t, s, http.MethodPost, ctbs, ctbBody("unsigned", "", authority.pem), 201, nil)
	key := ecKey(t, elliptic.P256())
	apitest.Must(t, s, http.MethodPost, pcrs, pcrBody("p", requestDER(t, key, "")), 201, nil)
	denied := `{"status":{"conditions":[{"type":"Denied","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
	forbidden := func(resource, name, msg string) apitest.Refusal {
		return apitest.Refusal{Code: 403, Reason: metav1.StatusReasonForbidden,
			Message: resource + `.certificates.k8s.io "` + name + `" is forbidden: ` + msg}
	}
	apitest.RunRefusals(t, s, []apitest.Case{
		{Name: "approve", Method: "PATCH", Path: csrs + "/example-com/approval", List: csrs,
			Body: `{"status":{"conditions":[{"type":"Approved","status":"True"}]}}`,
			Want: forbidden("certificatesigningrequests", "example-com", `user not permitted to approve requests with signerName "example.com/foo"`)},
		{Name: "sign", Method: "PATCH", Path: csrs + "/example-com/status", List: csrs,
			Body: `{"status":{"conditions":[{"type":"Failed","status":"True"}]}}`,
			Want: forbidden("certificatesigningrequests", "example-com", `user not permitted to sign requests with signerName "example.com/foo"`)},
		{Name: "attest", Method: "POST", Path: ctbs, List: ctbs, Body: ctbBody("example.com:foo:b", "example.com/foo", authority.pem),
			Want: forbidden("clustertrustbundles", "example.com:foo:b", `user not permitted to attest for signerName "example.com/foo"`)},
		{Name: "sign pod certificate", Method: "PATCH", Path: pcrs + "/p/status", List: pcrs, Body: denied,
			Want: pcrInvalid("p", `spec.signerName: Forbidden: User "setpoint-admin" is not permitted to "sign" for signer "example.com/foo"`, "spec.signerName:FieldValueForbidden")},
	})
	// Writes that change nothing the signer vouches for need no permission.
	apitest.Must(t, s, http.MethodPatch, csrs+"/example-com/status", `{"metadata":{"labels":{"a":"b"}}}`, 200, nil)
	apitest.Must(t, s, http.MethodPatch, ctbs+"/example.com:foo:old", `{"metadata":{"finalizers":["example.com/keep"]}}`, 200, nil)
	apitest.RunRefusals(t, s, []apitest.Case{{Name: "attest on update", Method: "PATCH", Path: ctbs + "/example.com:foo:old", List: ctbs,
		Body: `{"metadata":{"labels":{"a":"b"}}}`,
		Want: forbidden("clustertrustbundles", "example.com:foo:old", `user not permitted to attest for signerName "example.com/foo"`)}})
}
