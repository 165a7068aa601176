// Package cluster runs a whole setpoint cluster in one process: the API
// server on the store named by the options, the controller manager, the
// scheduler and N simulated nodes. It is what `setpoint up` runs.
//
// Calling protocol: Start builds and starts everything and returns once the
// API server answers (its kubeconfig written); WaitReady then returns once
// the controller manager and the scheduler lead and every simulated node is
// Ready; Wait returns when the cluster has stopped (its context ended, or a
// component failed: the first error stops all the others, since a cluster
// with a dead scheduler is not one to keep serving). A component that lost
// its leader election (its renewals missed the deadline on a starved
// machine) is not a failure: it exits, as kube's components do, and is
// started again as a new manager after a back-off of 1 s doubling to 10 s,
// as a kubelet restarts a control-plane component.
//
// The components reach the API server over HTTPS exactly as separate
// processes would, each with its own identity, as kubeadm sets a cluster
// up: the controller manager with the client certificate of
// system:kube-controller-manager (controller-manager.conf, written by the
// API server), each controller as its own ServiceAccount in kube-system
// (--use-service-account-credentials); the scheduler as
// system:kube-scheduler (scheduler.conf); each simulated node as
// system:node:<name> in system:nodes (a client certificate signed by the
// cluster CA, held in memory). Options.AdminComponents gives them the
// admin kubeconfig instead. Nothing bypasses the API. They elect
// leaders with a fixed identity derived from the data directory, so a
// restarted `setpoint up` takes its Leases back at once instead of waiting
// for them to expire.
package cluster
