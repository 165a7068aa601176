// Package conformance runs the reference Kubernetes clients — client-go,
// controller-runtime and kubectl — against a freshly started setpoint, and
// is where they may appear: it is its own Go module, so the product never
// depends on them. Every row of docs/COMPATIBILITY.md names the test here
// that proves it.
//
// Each test starts its own control plane with setpoint's testenv (in this
// process, on a free loopback port, the durable store in a temporary
// directory) and reaches it only through the kubeconfig it writes, as any
// client of a real cluster would.
package conformance
