// Package core describes the core/v1 resources (the legacy group served
// under /api/v1): namespaces, pods, nodes, services, configmaps, secrets,
// events, serviceaccounts, endpoints, limitranges, resourcequotas,
// persistentvolumes, persistentvolumeclaims, podtemplates,
// replicationcontrollers, and the resources not stored, componentstatuses
// and bindings; their strategies, admission and subresources.
//
// Kind-specific behaviour kept here: pods are deleted gracefully and bound
// to nodes through pods/binding (or the older bindings resource);
// namespaces are held by spec.finalizers until namespaces/finalize empties
// it, and the system namespaces exist from the start; services get cluster
// IPs and node ports from ranges claimed in storage, on create and on every
// update that needs new ones, and give them back when they stop needing
// them or are deleted; secrets fold stringData into data; events,
// services, endpoints and limitranges may be created by a PUT;
// replicationcontrollers orphan their pods unless a delete names a
// propagation policy; claims created without a class get the default
// StorageClass when storage.k8s.io is served, and new claims and volumes
// the kubernetes.io/pvc-protection and pv-protection finalizers; a claim's
// storage request grows only while bound and when its class allows
// expansion (403 otherwise, as PersistentVolumeClaimResize); componentstatuses report the
// Leases of the controller manager and the scheduler and whether the store
// answers.
//
// Not here, and said where it matters: the admission plugins of the
// chain (package admission: LimitRanger, ServiceAccount, Priority,
// DefaultTolerationSeconds, DefaultStorageClass,
// StorageObjectInUseProtection, RuntimeClass, ResourceQuota), the quota
// controller; binding claims to volumes and
// removing the protection finalizers (the controller manager's).
//
// Validation follows kube-apiserver v1.37.2 field by field; the reference
// tests (reference_test.go) replay scenarios against a real server and
// compare every answer with kube-apiserver's, recorded in
// testdata/reference.
//
// Pods, nodes and services have the connect subresources of kube-apiserver
// (connect.go): pods/log, exec, attach and portforward reach the kubelet
// endpoint the pod's Node reports (the first address of the types
// Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP, at
// status.daemonEndpoints.kubeletEndpoint.Port) with the API server's
// client certificate; pods/proxy reaches the pod's IP, nodes/proxy the
// node's kubelet or another of its ports, services/proxy a ready endpoint
// (from the Endpoints object when one is served and exists, else from the
// pods the selector picks, for want of an endpoints controller). Proxies
// refuse backends that are not global unicast addresses ("address not
// allowed"), as kube-apiserver does.
//
// pods/eviction (eviction.go) deletes a pod as kube-apiserver's eviction
// REST does, charging the matching PodDisruptionBudget of the policy
// group; pods/ephemeralcontainers and pods/resize are views of the pod
// that change only its ephemeral containers, or its containers' cpu and
// memory, with kube-apiserver's rules.
package core
