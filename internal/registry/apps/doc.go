// Package apps describes the apps/v1 resources (deployments, replica sets):
// Kubernetes' defaults, validation with kube-apiserver's field paths and
// messages, the status and scale subresources, and the field selectors
// kube-apiserver supports for them.
package apps
