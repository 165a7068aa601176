// Package persistentvolume is kube-controller-manager's
// persistentvolume-binder controller: it binds claims to volumes, keeps
// their phases, and reclaims volumes whose claims are gone.
//
// The contract, as Kubernetes':
//   - A Pending claim without spec.volumeName is bound to a volume pre-bound
//     to it (spec.claimRef naming it) or else to the smallest Available
//     volume that satisfies it: same class, access modes containing the
//     claim's, same volume mode, labels matching spec.selector, capacity at
//     least the request. For a WaitForFirstConsumer class only pre-bound
//     volumes are taken until the scheduler writes the
//     volume.kubernetes.io/selected-node annotation; then unbound volumes
//     whose node affinity admits that node are too.
//   - Binding writes, in order: the volume's claimRef (with the claim's UID;
//     annotation pv.kubernetes.io/bound-by-controller when the controller
//     chose it), the volume's phase Bound, the claim's spec.volumeName and
//     annotations pv.kubernetes.io/bind-completed (and bound-by-controller
//     when chosen), the claim's status (Bound, access modes, capacity).
//     Every step writes only what differs, so a binding cut short is
//     finished by the next sync of either object.
//   - No volume found: a claim created without a class gets the default
//     class (retroactive assignment); a WaitForFirstConsumer claim without a
//     selected node gets the event WaitForFirstConsumer (WaitForPodScheduled
//     naming the pods when unscheduled pods use it); a claim with a
//     class gets the annotations volume.kubernetes.io/storage-provisioner
//     and volume.beta.kubernetes.io/storage-provisioner naming the class's
//     provisioner, which creates the volume (event ExternalProvisioning);
//     a class of an in-tree provisioner name (kubernetes.io/…, such as the
//     kubernetes.io/no-provisioner of local volumes) gets ProvisioningFailed,
//     as no in-tree plugin is served; a claim without a class gets
//     FailedBinding.
//   - A claim naming its volume binds to it when it is free and satisfies
//     it (VolumeMismatch otherwise), or finishes a pre-binding.
//   - A bound claim whose volume is gone or claims another becomes Lost
//     (ClaimLost, ClaimMisbound).
//   - A volume without claimRef (or pre-bound without a UID) is Available;
//     bound to an existing claim naming it, Bound; its claim gone, Released
//     and reclaimed by policy: Retain keeps it Released; Delete leaves a
//     provisioned volume (annotation pv.kubernetes.io/provisioned-by) to its
//     provisioner and fails any other (no deleter is served); Recycle fails
//     (no recycler). A volume the controller bound to a claim that took
//     another volume is unbound.
//
// No volume is ever bound to two claims: a volume's claimRef names one
// claim UID and is written with the volume's resourceVersion, so of two
// syncs that chose the same volume from a stale cache one gets a conflict;
// a claim is Bound only after its volume names it. One worker syncs claims
// and volumes (kube has one per kind), on the informers' objects overlaid
// with the controller's own latest writes (kube's assume cache). Every
// claim and volume is synced again each ResyncPeriod (15 s).
//
// Metrics, on the manager's registry with kube-controller-manager's names:
// the gauges pv_collector_{total_pv,bound_pv,unbound_pv,bound_pvc,unbound_pvc}_count
// counted from the caches at each scrape, and the counters
// retroactive_storageclass_total and retroactive_storageclass_errors_total.
package persistentvolume
