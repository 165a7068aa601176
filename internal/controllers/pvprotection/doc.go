// Package pvprotection is kube-controller-manager's
// persistentvolume-protection controller. The API server gives every new
// volume the kubernetes.io/pv-protection finalizer
// (StorageObjectInUseProtection admission); this controller adds it to a
// live volume that lacks it and removes it from a deleted volume once the
// volume is no longer Bound to a claim, so a bound volume is never removed
// under its claim.
package pvprotection
