// Package extendcost measures, on the real kube-apiserver v1.37.2 (etcd +
// kube-apiserver, package refcluster), the two costs issue 15 bounds for
// setpoint, with setpoint's own workloads, so that setpoint's figures can
// be put next to the reference's:
//
//   - BenchmarkReferenceCELRules: a custom resource created over HTTP for
//     the same CRD without validation rules and with ten
//     (internal/celbench, setpoint's BenchmarkCreate in internal/apiserver),
//     one client, the two alternating; it reports the wall-clock time of
//     each create and the difference, and the CPU time kube-apiserver and
//     etcd spent per create of each (blocks of creates, alternating).
//   - BenchmarkReferenceWebhook: ConfigMaps created by 16 concurrent
//     writers without and then with a no-op validating webhook on loopback
//     (setpoint's BenchmarkCreateWithValidatingWebhook in
//     internal/admission/webhook): p50 and p99 of a create, each.
//
// Each benchmark starts a cluster of its own. Run them on a quiet machine:
//
//	cd compat && go test -run '^$' -bench Reference -benchtime 1x -count 3 ./extendcost/
//
// The package has only tests.
package extendcost
