package apiserver

import (
	"net/http"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// AuditAttributes exposes the attributes the audit policy (and the
// authorizer) sees, for tests; without the field selector requirements,
// which only authorization reads.
func AuditAttributes(r *http.Request, u registry.UserInfo) authorizer.Attributes {
	a := requestAttributes(r, u.AuthorizerUser())
	a.FieldSelector = nil
	return a
}
