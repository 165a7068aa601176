// Package sampleapiserver tests setpoint's API aggregation with real
// aggregated servers, in a module of its own so that k8s.io/apiserver's
// generic server never enters setpoint's: Kubernetes' sample API server
// (k8s.io/sample-apiserver, built from the Go module proxy, on the
// reference etcd) registered by an APIService and used with kubectl
// through `setpoint up`, and metrics-server's manifests, whose APIService
// gets kube-aggregator's conditions when its pods do not serve.
package sampleapiserver
