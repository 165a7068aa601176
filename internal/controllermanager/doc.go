// Package controllermanager assembles setpoint's control-plane components
// on managers from the controller runtime (package manager), as
// kube-controller-manager and kube-scheduler assemble theirs:
//
//   - NewControllerManager: the controllers of AllControllers (named as
//     kube-controller-manager's --controllers names them: workloads,
//     garbage collector, namespaces, nodes, service accounts and the
//     root-CA publisher, endpoints and slices, ClusterRole aggregation,
//     volumes and the simulated provisioner…) on one manager that holds the Lease
//     kube-system/kube-controller-manager (the root-CA publisher
//     publishes RootCAPublisher.RootCA, by default the CA the manager's
//     client configuration trusts; the tokens controller fills the token
//     Secrets users create only when ServiceAccountToken.Signer is set,
//     as kube-controller-manager with --service-account-private-key-file,
//     which setpoint up sets to the API server's key);
//   - NewScheduler: the scheduler on a manager that holds the Lease
//     kube-system/kube-scheduler;
//   - NewNodes: the simulated node agent (N nodes) on a manager without
//     leader election, since every node agent runs.
//
// Identities: with ControllerManagerOptions.UseServiceAccountCredentials
// (`setpoint controller-manager --use-service-account-credentials`, on by
// default, and in `setpoint up`) each controller writes and records its
// events as its ServiceAccount in kube-system under kube's name for it
// (replicaset-controller, generic-garbage-collector, node-controller for
// the node lifecycle and IPAM controllers, persistent-volume-binder for
// the binder and the simulated provisioner, …; package clientbuilder makes
// the ServiceAccounts and their TokenRequest tokens), as
// kube-controller-manager with kubeadm's flags; the shared informers,
// discovery and leader election use Config's identity
// (system:kube-controller-manager with controller-manager.conf). The
// scheduler and the nodes take their identity from their Config and
// nodeagent.Options.NodeCredentials.
//
// What it promises: each constructor only builds; nothing talks to the API
// server before the returned manager's Start. Leader election is on by
// default, with Kubernetes' timings (15 s lease, 10 s renew deadline, 2 s
// retry); a process that restarts with the same identity takes its Lease
// back at once, any other waits for it to expire. The managers serve
// /metrics and /healthz only on the addresses given ("" or "0": not at all).
//
// # Sharded mode
//
// With ControllerManagerOptions.Sharding.Enabled (`setpoint
// controller-manager --sharded --shards S`) every replica runs the
// ReplicaSet and Deployment controllers, each reconciling only the
// namespaces hashed into the shards it owns (package sharding: Leases
// kube-system/kube-controller-manager-shard-<i>, one membership Lease per
// replica, each replica at ceil(S/alive) shards; a dead replica's shards
// move after the lease duration, a joining replica gets its share from the
// others). The garbage-collector, namespace and node-lifecycle controllers
// are not sharded: they still run only on the holder of
// kube-system/kube-controller-manager, which every replica competes for as
// before. The sharder uses the election's identity and timings, and
// requires leader election to be on. The default remains plain leader
// election: one replica does everything.
//
// # Client limits and resync
//
// Each component's client limits are set explicitly (limits.go; Common.QPS
// and Burst, the --kube-api-qps and --kube-api-burst flags of `setpoint
// controller-manager` and `setpoint scheduler`, override them):
//
//	controller manager  none (kube-controller-manager's defaults are 20/30)
//	scheduler           none (kube-scheduler's are 50/100)
//	each node           50/100, the kubelet's (nodeagent.Options.KubeAPIQPS)
//	node agent's shared 50×N / 100×N for N nodes (its informers, and the
//	client               writes of nodes without credentials of their own)
//
// setpoint's controller manager and scheduler rely on the server's priority
// and fairness rather than a client-side bucket; setpoint's cluster
// benchmark runs the reference kube-controller-manager and kube-scheduler
// with 1000/1000 so that neither side is limited
// by its client. The controller manager's informers resync every
// MinResyncPeriod (12 h) × a factor drawn once per process from [1, 2), as
// kube-controller-manager's shared informer factory. The namespace
// controller also registers a resync of its own, as kube's does: its
// source of terminating namespaces (controller.WithResyncPeriod) replays
// them every namespace.Options.SyncPeriod (5 minutes, kube's
// --namespace-sync-period). The other controllers with a period of their
// own in kube (the HPA's 15 s, the resource quota's 5 minutes, the
// persistentvolume binder's 15 s) run it with RequeueAfter or a periodic
// source. The scheduler and the node agent do not resync, as
// kube-scheduler's and the kubelet's informers.
//
// Nothing here implements a controller: each lives in its own package under
// internal/controllers, internal/scheduler and internal/nodeagent and
// exposes Add(mgr, Options).
package controllermanager
