package printers

import (
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// The review kinds are created only, never listed or read; their tables
// are kube-apiserver's default ones.

// authenticationTable returns the table of an authentication.k8s.io/v1 kind.
func authenticationTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "TokenReview":
		return createdAtTable[*authenticationv1.TokenReview](now)
	case "SelfSubjectReview":
		return createdAtTable[*authenticationv1.SelfSubjectReview](now)
	}
	return nil
}

// authorizationTable returns the table of an authorization.k8s.io/v1 kind.
func authorizationTable(kind string, now func() time.Time) registry.TableConvertor {
	switch kind {
	case "SubjectAccessReview":
		return createdAtTable[*authorizationv1.SubjectAccessReview](now)
	case "LocalSubjectAccessReview":
		return createdAtTable[*authorizationv1.LocalSubjectAccessReview](now)
	case "SelfSubjectAccessReview":
		return createdAtTable[*authorizationv1.SelfSubjectAccessReview](now)
	case "SelfSubjectRulesReview":
		return createdAtTable[*authorizationv1.SelfSubjectRulesReview](now)
	}
	return nil
}
