// Command e2e runs Kubernetes' own conformance suite (e2e.test v1.37.2, the
// k8s.io/kubernetes module's test/e2e, built from the Go module proxy by the
// tools/e2e module) against a fresh `setpoint up --nodes 3`, on a fixed list
// of specs: specs-v1.37.txt, the API-level [Conformance] specs that the real
// control plane (kube-apiserver, kube-controller-manager, kube-scheduler
// v1.37.2 with KWOK nodes) passes on simulated nodes.
//
// Each spec runs in an e2e.test process of its own (ginkgo's focus-file on
// the spec's file:line), several at once, each with a timeout, with the
// flags that make the suite run on simulated nodes: --provider=skeleton
// --allowed-not-ready-nodes=0 --minStartupPods=0
// --dump-logs-on-failure=false, focus \[Conformance\], skip \[Disruptive\].
// The command writes a JUnit report (junit.xml), every spec's output, and
// prints a one-line summary ("conformance: P of N passed (…)") and the
// counts per SIG.
//
// e2e.test is built once into the repository's .bin/, named after a hash of
// tools/e2e's go.mod, go.sum and tools.go (as compat/refcluster caches the
// reference binaries), under a lock so that concurrent runs build once;
// -build-only does just that, so that CI can time the build as a step of
// its own. -subset fast-v1.37.txt runs the specs that finish in seconds
// (the CI subset).
package main
