//go:build tools

// Package helm pins the upstream Helm 3 client, built from Helm's own Go
// module (go build helm.sh/helm/v3/cmd/helm in this directory) for the
// conformance tests, which install, upgrade, roll back and uninstall the
// chart `helm create` makes against setpoint. It is its own module so that
// setpoint never depends on Helm.
package helm

import _ "helm.sh/helm/v3/cmd/helm"
