// Package pvcprotection is kube-controller-manager's
// persistentvolumeclaim-protection controller. The API server gives every
// new claim the kubernetes.io/pvc-protection finalizer
// (StorageObjectInUseProtection admission); this controller adds it to a
// live claim that lacks it and removes it from a deleted claim once no pod
// uses the claim, so a claim a pod still mounts is never removed under it.
//
// A pod uses a claim while it has not terminated (phase Succeeded or
// Failed) and one of its volumes names the claim (a persistentVolumeClaim
// source, or a generic ephemeral volume, whose claim is <pod>-<volume>).
// The cache decides when it shows a user; before the finalizer goes, the
// pods of the namespace are listed from the server, so a pod created a
// moment ago is not missed. A pod's deletion or end queues its claims.
package pvcprotection
