// Package controllermanager assembles setpoint's control-plane components
// on managers from the controller runtime (package manager), as
// kube-controller-manager and kube-scheduler assemble theirs:
//
//   - NewControllerManager: the ReplicaSet, Deployment, garbage-collector,
//     namespace and node-lifecycle controllers on one manager that holds
//     the Lease kube-system/kube-controller-manager;
//   - NewScheduler: the scheduler on a manager that holds the Lease
//     kube-system/kube-scheduler;
//   - NewNodes: the simulated node agent (N nodes) on a manager without
//     leader election, since every node agent runs.
//
// What it promises: each constructor only builds; nothing talks to the API
// server before the returned manager's Start. Leader election is on by
// default, with Kubernetes' timings (15 s lease, 10 s renew deadline, 2 s
// retry); a process that restarts with the same identity takes its Lease
// back at once, any other waits for it to expire. The managers serve
// /metrics and /healthz only on the addresses given ("" or "0": not at all).
//
// Nothing here implements a controller: each lives in its own package under
// internal/controllers, internal/scheduler and internal/nodeagent and
// exposes Add(mgr, Options).
package controllermanager
