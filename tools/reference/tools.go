//go:build tools

// Package reference pins the real Kubernetes control plane, v1.37.2, built
// from the k8s.io/kubernetes module on the Go module proxy: kube-apiserver,
// kube-controller-manager and kube-scheduler. It is the reference that
// setpoint is compared with (compat/refcluster builds these commands once
// into .bin/ and runs them); it lives in its own module so that setpoint
// itself never depends on k8s.io/kubernetes.
//
// The file only records the dependencies for go mod tidy; build a command
// with, for example,
//
//	CGO_ENABLED=0 go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=v1.37.2 ..." \
//	    -o kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
//
// (compat/refcluster has the full flag set).
package reference

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
