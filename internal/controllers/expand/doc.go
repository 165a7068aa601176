// Package expand grows volumes whose claims ask for more storage: what
// kube-controller-manager's persistentvolume-expander controller, the CSI
// external resizer and the kubelet's node expansion do together, for the
// volumes of the simulated provisioner (classes whose provisioner is
// provisioner.DefaultName). Claims of other provisioners are left to their
// own resizers.
//
// A Bound claim whose spec.resources.requests.storage exceeds its volume's
// capacity (the API server lets the request grow only when the class
// allows expansion) goes through kube's steps, each a write the next
// depends on:
//
//  1. event ExternalExpanding (the expander hands the claim to the
//     resizer); status: condition Resizing, allocatedResources.storage = the request,
//     allocatedResourceStatuses.storage = ControllerResizeInProgress; event
//     Resizing;
//  2. the volume's spec.capacity.storage = the request;
//  3. status: condition FileSystemResizePending (instead of Resizing),
//     allocatedResourceStatuses.storage = NodeResizePending; event
//     FileSystemResizeRequired;
//  4. the node side, once a pod that has not terminated and is on a node
//     uses the claim (as the kubelet expands the file system when it
//     mounts the volume): status.capacity.storage = the volume's capacity,
//     the condition and the allocatedResourceStatuses entry removed; event
//     FileSystemResizeSuccessful. Without such a pod the claim stays
//     FileSystemResizePending, as on Kubernetes.
package expand
