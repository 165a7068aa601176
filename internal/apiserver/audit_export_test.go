package apiserver

// AuditAttributes exposes the attributes the audit policy sees, for tests.
var AuditAttributes = auditAttributes
