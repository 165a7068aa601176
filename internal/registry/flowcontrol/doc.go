// Package flowcontrol describes the flowcontrol.apiserver.k8s.io/v1
// resources: flowschemas and prioritylevelconfigurations (both with
// status), with kube-apiserver's defaults and validation, and the
// mandatory and suggested configuration objects kube-apiserver creates at
// start (bootstrap.json, copied from kube-apiserver v1.37.2), their
// FlowSchemas marked as referring to existing priority levels.
//
// The objects are served only: the server does not yet enforce priority
// and fairness with them (no request classification, no queuing, no
// X-Kubernetes-PF-* headers, no Dangling conditions maintained for objects
// created later).
package flowcontrol
