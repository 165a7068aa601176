// Command cluster is the whole-cluster benchmark of setpoint against the
// real Kubernetes, measured side by side in one run on one machine.
//
// The reference is etcd 3.6, kube-apiserver, kube-controller-manager and
// kube-scheduler v1.37.2 (package compat/refcluster, built from the Go
// module proxy into .bin/) with KWOK v0.8.0 simulating the nodes (built
// with `go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0` into .bin/, or
// $SETPOINT_KWOK, run with its default fast stages from the module's
// kustomize/stage; the reference binaries may come from
// $SETPOINT_REFERENCE_BIN_DIR as refcluster describes). The
// controller manager and the scheduler run with --kube-api-qps and
// --kube-api-burst raised (-reference-qps, default 1000/1000); with
// -reference-defaults a second reference side runs them with their default
// client limits (QPS 20, burst 30 for the controller manager; 50/100 for
// the scheduler), for the record. The benchmark creates the Nodes, annotated
// kwok.x-k8s.io/node=fake, with the capacity of setpoint's simulated nodes
// (32 CPUs, 256Gi, 110 pods) and a podCIDR each, and waits for KWOK to make
// them Ready and for the node lifecycle controller to leave them untainted.
//
// setpoint is `setpoint up --nodes N` (built from this repository, or
// -setpoint-bin): one process with its API server on the embedded store,
// controller manager, scheduler and N simulated nodes. Its nodes act as
// kubelets do by default: besides a pod's status they write the Pulled,
// Created and Started events of each container and read, as the node, the
// pod's ServiceAccount for its token volume — four requests per pod that
// KWOK's nodes never make. The side setpoint-kwok-nodes turns these off
// (--disable-kubelet-events --ignore-missing-pod-dependencies), so that
// both clusters' nodes ask the same of their control plane.
//
// Each run starts a fresh cluster of one side, waits until its N nodes are
// Ready, applies one workload with client-go (the same code for both
// sides) and times, from the create request, until a watch sees it done:
//
//   - deployment: a Deployment of -deploy-replicas (10,000) on -deploy-nodes
//     (100) nodes, until every pod is Running and Ready;
//   - job: a Job of -job-completions (1,000) with -job-parallelism (100) on
//     -job-nodes (100) nodes, until its Complete condition is True;
//   - statefulset: a StatefulSet of -sts-replicas (500), podManagementPolicy
//     Parallel, with its headless Service, on -sts-nodes (100) nodes, until
//     status.readyReplicas reaches the replicas;
//   - daemonset: a DaemonSet on -ds-nodes (500) nodes, until
//     status.numberReady reaches the nodes.
//
// After each run it reads, from /proc, the resident memory and the CPU
// seconds (user + system, spent during the workload) of the side's
// processes — for the reference the sum of etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and KWOK, each also listed — then
// stops the cluster. The sides alternate within each of -rounds rounds
// (reference, setpoint, reference, setpoint…); a run that is not done within
// -timeout is reported as "did not finish" with its progress, and the
// benchmark goes on. The end is a table of medians and each side's ratios
// to the reference (reference time / side time: above 1 means the side is
// faster), or to the first side listed when no reference side ran.
//
//	make bench-cluster
//	make bench-cluster BENCH_CLUSTER_FLAGS='-quick -workloads deployment'
//	cd bench/cluster && go run . -rounds 3 -reference-defaults
//
// The module is not a dependency of setpoint: client-go and the reference
// live only here.
package main
