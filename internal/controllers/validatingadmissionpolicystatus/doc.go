// Package validatingadmissionpolicystatus is kube-controller-manager's
// validatingadmissionpolicy-status-controller: for each
// ValidatingAdmissionPolicy whose generation is newer than
// status.observedGeneration it type-checks the validations' expressions
// and messageExpressions against the schemas of the kinds the policy
// matches (its resourceRules without wildcards, at most 10 kinds; the
// schemas from the server's discovery and OpenAPI v3, params typed by
// paramKind, variables composed) and applies status.observedGeneration and
// status.typeChecking.expressionWarnings (field manager
// validatingadmissionpolicy-status-controller), as its ServiceAccount
// kube-system/validatingadmissionpolicy-status-controller. Type checking
// never changes what the policy does.
package validatingadmissionpolicystatus
