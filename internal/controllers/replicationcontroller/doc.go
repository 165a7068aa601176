// Package replicationcontroller is kube-controller-manager's
// "replicationcontroller-controller": the legacy v1 ReplicationController
// run by the ReplicaSet controller (package replicaset), as Kubernetes
// runs its ReplicaSet controller on converted ReplicationControllers.
//
// # Contract
//
//	err := replicationcontroller.Add(mgr, replicaset.Options{})
//
// Everything package replicaset promises holds, with these differences:
//
//   - The selector is spec.selector, a map of labels (matchLabels); the
//     template is spec.template.
//   - Pods get a controller reference of apiVersion v1, kind
//     ReplicationController.
//   - Status (replicas, fullyLabeledReplicas, readyReplicas,
//     availableReplicas, observedGeneration, the ReplicaFailure condition)
//     is written to the ReplicationController's status subresource.
//   - Events (SuccessfulCreate "Created pod: <name>", SuccessfulDelete
//     "Deleted pod: <name>", FailedCreate, FailedDelete) refer to the
//     ReplicationController and come from component
//     "replication-controller".
package replicationcontroller
