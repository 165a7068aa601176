// Package storagemigration describes the storagemigration.k8s.io/v1
// resource storageversionmigrations (with status), with kube-apiserver
// v1.37's validation and printer. The objects are stored and served; no
// migration controller acts on them here.
package storagemigration
