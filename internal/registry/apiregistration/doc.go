// Package apiregistration describes the apiregistration.k8s.io/v1
// resource apiservices (with status) and the local APIService objects
// kube-apiserver keeps for every built-in group-version it serves
// ("v1.apps", Local, Available True), created at start from the list of
// served group-versions the caller passes.
//
// Local APIServices are marked available on create and on every write, as
// kube-apiserver's strategy and availability controller do. Proxying to
// an APIService's backend service, and checking a backend's availability
// (its Available condition), are package aggregator's, run by the server.
package apiregistration
