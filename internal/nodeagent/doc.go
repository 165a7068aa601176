// Package nodeagent simulates kubelets, as KWOK does, inside our binary: one
// Agent plays Options.Count nodes named NamePrefix+"0" … against the API
// server, with no container runtime behind them.
//
// # What an Agent owns
//
//   - The Nodes it registers: created (or taken over when one of that name
//     exists: labels merged, an empty pod CIDR set, taints left alone)
//     with labels, pod CIDR (the i-th /24 of 10.128.0.0/9), capacity =
//     allocatable, the address and port of the agent's kubelet endpoint
//     (InternalIP and status.daemonEndpoints.kubeletEndpoint.Port; no
//     Hostname address, which kube-apiserver would prefer and could not
//     resolve), node info;
//     the four kubelet conditions (Ready=True KubeletReady, Memory/Disk/PID
//     pressure False) are written through the status subresource.
//
//   - Their heartbeats: a Lease per node in kube-node-lease (holder the
//     node, 40s duration, owned by the Node) renewed every 10s, and the
//     node status compared every 10s with what this kubelet reports and
//     posted when it differs (e.g. the node lifecycle controller set Ready
//     to Unknown) or 5 minutes passed — the kubelet's defaults. Taints are
//     never touched: the lifecycle controller removes the ones it placed.
//
//   - The pods bound to its nodes: one informer for all nodes (field
//     selector spec.nodeName!=, served by the API server's watch cache),
//     a workqueue and Options.Workers workers that write pod status through
//     the status subresource. A pod goes from Pending to Running
//     StartDelay after the agent first sees it bound, with phase, the
//     PodReadyToStartContainers/Initialized/ContainersReady/Ready
//     conditions (PodScheduled and other conditions kept), podIP(s) unique
//     per node from its pod CIDR, hostIP(s), startTime and one container
//     status per container (imageID, containerID, ready, started,
//     state.running.startedAt, restartCount). qosClass is left as is.
//     Regular init containers are reported Completed, sidecars running.
//
//   - Deletion: a pod with a deletionTimestamp on a live node is deleted
//     with gracePeriodSeconds=0 and a uid precondition, min(deletion grace
//     period, StopDelay) after the agent saw the deletion — the API server
//     holds bound pods until that final delete.
//
//   - The kubelet endpoint (server.go): one HTTPS listener for all the
//     agent's nodes (Options.ServingAddress, a self-signed serving
//     certificate), open to clients whose certificate Options.ClientCA
//     signed (the API server's kubelet client certificate), 401 otherwise.
//     /containerLogs/{ns}/{pod}/{container} serves the simulated
//     containers' logs with the kubelet's options (follow, previous,
//     tailLines, sinceSeconds, sinceTime, timestamps, limitBytes) and its
//     error messages; /exec, /attach and /portForward answer a 400 Status
//     saying the node is simulated; /healthz answers ok. A stopped node
//     (StopHeartbeat) drops the connection, as a dead kubelet.
//
//   - The logs (logs.go): every run of a container writes lines telling
//     its life (started or restarted, exited with code N, killed by the
//     pod's deletion), timestamped with the agent's clock; the latest run
//     and the one before are kept (--previous). Init containers log their
//     run at the pod's start; ephemeral containers added to a pod
//     (kubectl debug) are started, reported running and logged too.
//
//   - Container statuses report cpu and memory resources as the spec has
//     them (a simulated in-place resize is applied at once), which the API
//     server requires before it allows pods/resize.
//
// # Failure injection
//
// StopHeartbeat(node) stops the node's Lease renewals, status posts and
// pod handling, like a dead kubelet; ResumeHeartbeat(node) renews and posts
// at once and handles its pods again (including deletions that waited).
// CrashContainer(ns, pod, container, code) ends a running container's run:
// lastState.terminated records it; under restartPolicy Always, or OnFailure
// with a non-zero code, restartCount grows and the container waits in
// CrashLoopBackOff for 10s (doubling per restart, at most 5 minutes; see
// Options.RestartBackoff) before it runs again; otherwise it stays
// terminated, and once no container runs the pod is Succeeded (all exited 0)
// or Failed. The pod annotation setpoint.dev/crash-after: "<duration>",
// read when the pod is first handled, crashes its first container that long
// after every start, with exit code setpoint.dev/crash-exit-code (default
// 1).
//
// # Invariants
//
//   - The simulation state of a pod (kept in memory, rebuilt from the pod's
//     status after a restart) is the source of truth; its status is a pure
//     function of that state and the pod, with times at whole seconds, so
//     an unchanged pod is never written again.
//   - No two live pods of one node hold the same IP: addresses are reserved
//     from the pods' statuses before the first worker starts, and freed when
//     a pod is gone or terminal.
//   - A dead node's pods are not touched; pods of nodes not simulated here
//     are ignored.
//   - The Agent runs whether or not its manager leads (NeedLeaderElection
//     is false) and starts once.
//
// Not simulated: probes, image pulls, resource accounting, eviction under
// pressure, activeDeadlineSeconds, resize conditions (PodResizePending,
// PodResizeInProgress), a final status write before the grace-0 delete;
// the kubelet endpoint serves no /pods, /stats or /metrics (one listener
// serves all the agent's nodes and could not tell which one a request
// meant).
package nodeagent
