// Package events describes the events.k8s.io/v1 resources: events, a view
// of the core/v1 Events' storage (registry.StorageView). Both versions
// read, write and watch the same objects; this package converts between
// them as Kubernetes does (regarding is involvedObject, note is message,
// the deprecated* fields are the core Event's source, timestamps and
// count).
//
// Writes through events.k8s.io/v1 are validated as kube-apiserver
// validates them: on the core form (so field paths are the core Event's:
// message, involvedObject, source…), with the checks every Event passes
// plus the stricter ones of the new API (reportingController,
// reportingInstance, action, reason and eventTime required; the
// deprecated fields unset on create; most fields immutable on update).
package events
