// Package provisioner is the simulated dynamic provisioner of setpoint's
// volumes, built like a CSI external provisioner (the
// sig-storage-lib-external-provisioner contract): it serves the classes
// whose provisioner is DefaultName ("setpoint.dev/simulated").
//
// Provisioning: a claim the persistent-volume binder handed to this
// provisioner (annotation volume.kubernetes.io/storage-provisioner or its
// beta twin naming it), not yet bound, of a class it serves, and, for a
// WaitForFirstConsumer class, with the scheduler's
// volume.kubernetes.io/selected-node annotation, gets the volume
// pvc-<claim UID>: the claim's requested size, access modes and volume
// mode; the class's reclaim policy (default Delete) and mount options; the
// annotation pv.kubernetes.io/provisioned-by; a claimRef to the claim (the
// binder completes the binding); a hostPath source under VolumeDir; and for
// a selected node a required node affinity on its kubernetes.io/hostname
// label. Events on the claim: Provisioning, then ProvisioningSucceeded (or
// ProvisioningFailed). A claim with a selector is refused, as the library
// refuses it.
//
// Deleting: a volume it provisioned whose reclaim policy is Delete is
// deleted once the binder marks it Released.
//
// The default class: a new cluster gets the StorageClass "standard"
// (default annotation, this provisioner, WaitForFirstConsumer, reclaim
// Delete, allowVolumeExpansion), as kind's clusters do. The provisioner
// installs it when it first runs as leader, and records that in the
// ConfigMap kube-system/setpoint-default-storageclass; once that record
// exists it never touches the class again. So the class is there without
// any step of the user, like an addon applied at cluster creation, and a
// user who deletes or changes it (or makes another class the default)
// keeps that choice across restarts. Deleting the record reinstalls the
// class at the next start. Options.NoDefaultClass leaves it out.
package provisioner
