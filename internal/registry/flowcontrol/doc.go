// Package flowcontrol describes the flowcontrol.apiserver.k8s.io/v1
// resources: flowschemas and prioritylevelconfigurations (both with
// status), with kube-apiserver's defaults and validation, and the
// mandatory and suggested configuration objects kube-apiserver creates at
// start (bootstrap.json, recorded from kube-apiserver v1.37.2), their
// FlowSchemas marked as referring to existing priority levels.
//
// The API server enforces them (package internal/flowcontrol, filter
// internal/apiserver/flowcontrol.go); this package gives it the built-in
// configuration (Config, MandatoryConfig: bootstrap.json, recorded by
// TestBootstrapRecorded), kube-apiserver's rules for keeping it up to date
// at start (AutoUpdatedFlowSchema, AutoUpdatedPriorityLevel, Obsolete: the
// apf.kubernetes.io/autoupdate-spec annotation) and the Dangling condition
// it writes on FlowSchemas (DanglingCondition).
package flowcontrol
