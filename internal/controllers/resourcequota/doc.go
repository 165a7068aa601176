// Package resourcequota is the ResourceQuota controller: it writes each
// quota's status (hard from spec.hard, used recounted from the objects of
// its namespace), as Kubernetes' pkg/controller/resourcequota.
//
// # Calling protocol
//
//	err := resourcequota.Add(mgr, resourcequota.Options{})
//
// Add registers one controller (it runs while the manager leads) with
// Options.Workers workers (default 5). A quota is synced when it is
// created, when its spec changes or its status does not match its spec;
// when an object its namespace counts changes in a way that may lower
// usage (pods: deleted, finished, their deletion started or their spec
// changed; services and claims: updated or deleted; config maps,
// secrets, replication controllers: deleted) — never on an object's
// creation, as Kubernetes' quota monitor: the ResourceQuota admission
// charged it, and a recount then could undo the charge of a create still
// in flight (charged, not yet stored) and let one more past the limit;
// when an object of any other
// built-in quotable kind is deleted (count/<resource>.<group>: a
// metadata-only informer of each such kind, PartialObjectMetadata in
// protobuf, keeping only names, runs while the controller leads,
// as Kubernetes' quota monitor replenishes on deletes); and every
// ResyncPeriod (5 minutes, Kubernetes' --resource-quota-sync-period).
//
// # What a sync does
//
// It reads the quota live, then lists live (a consistent read) the
// objects of every served kind whose evaluator (the kind's
// registry.QuotaEvaluator, package quota) uses a name of spec.hard, sums
// the usage of those under the quota's scopes, and writes status.hard and
// status.used (only the hard names) with the quota's resourceVersion as
// precondition: a charge the ResourceQuota admission made meanwhile makes
// the write conflict, and the sync is tried again on the newer quota. A
// name no kind uses keeps its last observed usage, as in Kubernetes. A
// status that is already right is not written. This releases the usage of
// deleted objects and finished pods, and corrects charges of writes that
// failed after admission.
//
// The kinds are those setpoint serves built in (registry/builtin); custom
// resources' count/<resource>.<group> names are not recounted (they keep
// the usage admission charges).
package resourcequota
