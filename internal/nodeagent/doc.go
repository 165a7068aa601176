// Package nodeagent simulates kubelets, as KWOK does, inside our binary: one
// Agent plays Options.Count nodes named NamePrefix+"0" … against the API
// server, with no container runtime behind them.
//
// # What an Agent owns
//
//   - The Nodes it registers: created (or taken over when one of that name
//     exists: labels merged, an empty pod CIDR set, taints left alone)
//     with labels, pod CIDR (the i-th /24 of 10.128.0.0/9), capacity =
//     allocatable (extended resources others add to capacity, e.g.
//     example.com/foo, kept in both, as the kubelet keeps them), the address and port of the agent's kubelet endpoint
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
//     selector spec.nodeName!=, served by the API server's watch cache;
//     one per node when nodes read as themselves, see Identity),
//     a workqueue and Options.Workers workers that write pod status through
//     the status subresource. StartDelay after the agent first sees a pod
//     bound, the kubelet admits it (status.startTime), sets up its volumes
//     and makes its sandbox (podIP(s) unique per node from its pod CIDR,
//     hostIP(s)); then its containers run as below. The status carries the
//     phase, the PodReadyToStartContainers/Initialized/ContainersReady/
//     Ready conditions worded as the kubelet words them (ContainersNotReady
//     "containers with unready status: [a b]", ContainersNotInitialized
//     "containers with incomplete status: [...]", PodCompleted once
//     Succeeded; PodScheduled and other conditions kept), and one status per
//     init and regular container (imageID, containerID, ready, started,
//     state, lastState, restartCount; waiting PodInitializing or
//     ContainerCreating before the first run). status.observedGeneration
//     and each of those conditions' (PodScheduled's too) carry the pod's
//     generation, so a spec change is seen to be acted on. qosClass is left
//     as is.
//
//   - Admission (admission.go, admitfit.go): before a pod starts, the
//     kubelet's predicate admit handler judges it against its Node (as
//     the agent's cache has it) and the pods admitted there still active
//     (not terminal, not stopped after their deletion; rejected pods never
//     count), in the kubelet's order: the pod's kubernetes.io/os label
//     (PodOSSelectorNodeLabelDoesNotMatch) and spec.os
//     (PodOSNotSupported) against linux; the pod count, cpu, memory,
//     ephemeral-storage and other requests (containers and sidecars, or
//     the largest init container, pod-level requests, overhead; extended
//     resources the node does not know ignored) against allocatable
//     (OutOfpods, OutOfcpu, … "Node didn't have enough resource: cpu,
//     requested: 1000, used: 1500, capacity: 2000"); nodeSelector and
//     required node affinity (NodeAffinity), nodeName (NodeName), host
//     ports (NodePorts), NoExecute taints not tolerated (TaintToleration),
//     each "Predicate <name> failed: <kube-scheduler's reason>". The first
//     failure rejects the pod: phase Failed, that reason, message "Pod was
//     rejected: <message>", startTime the rejection, qosClass and the
//     conditions the kubelet does not own (PodScheduled) kept, no
//     container statuses or addresses, and a Warning event of that reason
//     and message; it never runs (a new pod of that name, as a
//     StatefulSet recreates it, is judged anew). Decisions are made under
//     the agent's mutex, and the pods of a node due at the same time are
//     decided together in creation order (then name), as the kubelet
//     admits one at a time, so two pods never both take the last of
//     something. A pod an earlier agent admitted (startTime set) is not
//     judged again.
//
//   - Containers' lives (lifecycle.go, probes.go). Init containers run one
//     after the other, each until its run time ends (Init:0/2 → Init:1/2 in
//     kubectl); a failing one is restarted with back-off unless the pod's
//     restartPolicy is Never, which fails the pod; one that completed with
//     exit code 0 reads as ready, as the kubelet's prober reports it. A
//     sidecar (an init
//     container with restartPolicy Always) starts in its turn and the next
//     init container waits until its startup probe succeeded; sidecars are
//     restarted whatever the pod's policy and count for readiness. The
//     regular containers start together once the init containers are
//     done. Containers of pods meant to finish (restartPolicy Never or
//     OnFailure, and either a Job's pod or a container naming its command
//     or args, e.g. Jobs' pods and Helm test hooks; a bare image outside
//     a Job is a server left to run, as the e2e suite's agnhost pods that
//     must stay Running, and runs until deleted) and regular init
//     containers exit after Options.RunTime (default 0: at once after they
//     started, as KWOK's default stages complete Job pods; no better
//     founded default exists, a real run time being the workload's) with
//     exit code 0, reason Completed (non-zero: Error); under restartPolicy
//     Always containers run until crashed, killed or the pod deleted. A
//     container that exits is restarted under Always, or OnFailure with a
//     non-zero code, after a back-off of Options.RestartBackoff doubling
//     per restart up to 5 minutes (waiting CrashLoopBackOff, "back-off 10s
//     restarting failed container=c pod=name_ns(uid)"); otherwise it stays
//     terminated, and once every regular container has, the running
//     sidecars are stopped (exit 0) and the pod is Succeeded (all exited 0)
//     or Failed. Probes follow their timings: a probe runs when the
//     container starts and every periodSeconds, skipping those before
//     initialDelaySeconds; readiness needs successThreshold successes and
//     waits for the startup probe (started=false until then); without a
//     readiness probe a container is ready once started. Simulated probes
//     succeed unless a knob below makes them fail; a liveness probe that
//     fails failureThreshold times kills the container (exit code 137,
//     Error), which is restarted per policy. activeDeadlineSeconds after
//     startTime the pod is Failed with reason DeadlineExceeded, message
//     "Pod was active on the node longer than the specified deadline", its
//     running containers terminated (137) at the deadline. The field may
//     be set or lowered on a running pod: the new deadline counts from
//     startTime too, and one already past kills the pod when the node sees
//     the change.
//
//   - Dependencies (deps.go), with the kubelet's reasons, until they
//     appear (informers on ConfigMaps, Secrets, PersistentVolumeClaims and
//     ServiceAccounts requeue the blocked pods of the namespace): a volume
//     whose ConfigMap or Secret (or projected source) is missing keeps the
//     pod Pending without a sandbox, containers waiting ContainerCreating,
//     with FailedMount `MountVolume.SetUp failed for volume "v" : configmap
//     "x" not found`; a projected serviceAccountToken source whose
//     ServiceAccount is missing likewise (`failed to fetch token:
//     serviceaccounts "x" not found`); a PersistentVolumeClaim missing or
//     not Bound gives `Unable to attach or mount volumes: unmounted
//     volumes=[v], unattached volumes=[], failed to process volumes=[v]:
//     error processing PVC ns/x: …` (at once, where the kubelet waits 2
//     minutes). A container whose env or envFrom needs a missing ConfigMap,
//     Secret or key waits in CreateContainerConfigError (`configmap "x" not
//     found`, `couldn't find key k in ConfigMap ns/x`), rechecked at each of
//     its starts; the pod is Pending while such a container never ran.
//     Optional references never block. Volumes are checked only until the
//     sandbox is made, as mounted volumes stay. Options.IgnoreMissingDependencies
//     turns the checks off (KWOK's behaviour): objects a workload's own
//     program would create at run time never appear on simulated nodes.
//
//   - Events (events.go), unless Options.DisableEvents, through a record
//     broadcaster (asynchronous, deduplicating, dropping past
//     Options.EventQueueSize) with source component "kubelet" and host the
//     node, naming the container in involvedObject.fieldPath: per container
//     start Pulling and Pulled (the first time the node uses the image, or
//     imagePullPolicy Always) or Pulled "already present on machine and can
//     be accessed by the pod", Created "Created container: c", Started
//     "Started container c"; Killing "Stopping container c" (deletion,
//     deadline) or "Container c failed liveness probe, will be restarted";
//     BackOff "Back-off restarting failed container c in pod name_ns(uid)";
//     Unhealthy "Liveness probe failed: …"/"Readiness probe failed: …";
//     FailedMount; Failed "Error: <config error>"; DeadlineExceeded. A
//     plain Deployment pod costs three event writes (Pulled, Created,
//     Started).
//
//   - Image pulls (pull.go): every image pulls at once except those
//     Options.UnpullableImages names (`setpoint up --unpullable-image`):
//     their containers never start; each pull fails with the kubelet's
//     events (Pulling, Failed "Failed to pull image …", Failed "Error:
//     ErrImagePull"), the container waits in ErrImagePull, then, a second
//     later, ImagePullBackOff (BackOff "Back-off pulling image …") until
//     the image back-off (10s doubling to 5m) ends and the pull is tried
//     again; under imagePullPolicy Never it waits in ErrImageNeverPull.
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
//     saying the node is simulated; /healthz answers ok;
//     /node/{node}/metrics/resource is the kubelet's /metrics/resource of
//     one node (the listener is shared, so the path names the node; plain
//     /metrics/resource answers 404 saying so): Prometheus text with the
//     scrape's timestamp on each sample, container_cpu_usage_seconds_total,
//     container_memory_working_set_bytes, container_start_time_seconds,
//     node_ and pod_ cpu and memory, resource_scrape_error (usage.go,
//     metrics.go). A running container uses its requests, or what the
//     annotations setpoint.dev/cpu-usage and setpoint.dev/memory-usage say
//     (read live, at each pod update and scrape); its cpu counter is the
//     integral of that usage over its run, the node's the sum of its
//     containers' counters, those that ended included. A
//     stopped node (StopHeartbeat) drops the connection, as a dead kubelet.
//
//   - The logs (logs.go): every run of a container writes lines telling
//     its life (started or restarted, exited with code N, killed by the
//     pod's deletion), timestamped with the agent's clock; the latest run
//     and the one before are kept (--previous). Init containers log
//     their runs like the others; ephemeral containers added to a pod
//     (kubectl debug) are started, reported running and logged too.
//
//   - Container statuses report cpu and memory resources as the spec has
//     them (a simulated in-place resize is applied at once), which the API
//     server requires before it allows pods/resize.
//
// # Identity
//
// With Options.NodeCredentials each node reads and writes as itself,
// system:node:<name> in system:nodes, so the Node authorizer and
// NodeRestriction judge every request as a kubelet's. It writes its Node
// and status, its Lease, its pods' status and final deletion, its events.
// It reads (reads.go) as a kubelet reads: its pods through an informer of
// its own (list and watch with fieldSelector spec.nodeName=<name>), its
// Node through another (metadata.name=<name>); the ConfigMaps and Secrets
// its pods need as the kubelet's watch-based manager (objwatch.go): one
// list and watch per object (its namespace, fieldSelector
// metadata.name=<object>), started by the first pod of the node that
// needs it, shared by the node's pods, stopped with the last; a check
// waits up to a second for a new watch's first list, then fails with the
// kubelet's "failed to sync secret cache: timed out waiting for the
// condition", which is what a pod whose object the Node authorizer
// refuses gets; and, while a pod's volumes are set up, a get of each of
// its claims and of the ServiceAccount of its token volumes (the kubelet
// requests a token of it instead: the same relation in the Node
// authorizer's graph, the same NotFound, without signing a token nobody
// uses). Claims and ServiceAccounts cannot be watched by a node, so a pod
// waiting for a dependency is looked at again after a back-off (500ms
// doubling to 2m2s, wall-clock time), besides the watches' news. The
// manager's client then reads nothing. The cost per node is two informers
// and one watch per object its pods need, each a stream on the node's own
// connection; no node holds a copy of anything cluster-wide.
//
// Without NodeCredentials (bare tests) the agent reads and writes as its
// manager: one informer of every bound pod (fieldSelector spec.nodeName!=),
// one of all Nodes, and cluster-wide informers of the ConfigMaps, Secrets,
// claims and ServiceAccounts pods depend on.
//
// # Failure injection and knobs
//
// StopHeartbeat(node) stops the node's Lease renewals, status posts and
// pod handling, like a dead kubelet; ResumeHeartbeat(node) renews and posts
// at once and handles its pods again (including deletions that waited).
// CrashContainer(ns, pod, container, code) ends a running (init or
// regular) container's run now, restarted or not as any exit.
//
// Pod annotations (knobs.go), read when the agent first handles the pod;
// each takes one value, or a list "container=value,…" naming init and
// regular containers: setpoint.dev/run-time (a duration; a single value
// applies to init containers and to containers of pods meant to finish),
// setpoint.dev/exit-code (default 0), setpoint.dev/crash-after with
// setpoint.dev/crash-exit-code (default 1; a single value applies to the
// first container), setpoint.dev/liveness-fail-after (the liveness probe
// fails from that long after each start; containers without a liveness
// probe ignore it), setpoint.dev/ready-after (the readiness probe, or
// without one readiness, succeeds only that long after each start),
// setpoint.dev/not-ready ("true" or container names: the readiness probe
// always fails). setpoint.dev/cpu-usage and setpoint.dev/memory-usage
// (quantities, same forms) are read live rather than once: they set the
// usage /metrics/resource reports (default: the container's requests).
//
// # Invariants
//
//   - The simulation state of a pod (kept in memory, rebuilt from the pod's
//     status after a restart: a running container keeps its start, so its
//     run time, probe times and crash are those it had; one in back-off
//     restarts its back-off after its last exit) is the source of truth;
//     its status is a pure function of that state, the pod and the time
//     (readiness turns at times known in advance), with times at whole
//     seconds, so an unchanged pod is never written again. Transitions
//     happen at the times they were due, not when the agent looked.
//   - No two live pods of one node hold the same IP: addresses are reserved
//     from the pods' statuses before the first worker starts, and freed when
//     a pod is gone or terminal.
//   - A dead node's pods are not touched; pods of nodes not simulated here
//     are ignored.
//   - The Agent runs whether or not its manager leads (NeedLeaderElection
//     is false) and starts once.
//
// Not simulated: the admit handlers other than the predicate one (unsafe
// sysctls, AppArmor, eviction under pressure, node shutdown, topology and
// device managers), the critical pod handler that evicts pods to make
// room, SupplementalGroupsPolicy Strict (no node declares status.features),
// probe handlers (nothing is probed: results follow the
// knobs), the first restart without back-off (the kubelet restarts a
// container at once the first time; here every restart waits), pull
// times, image pull failures other than the listed images, pull secrets,
// lifecycle hooks, readiness
// gates, one Unhealthy event per failing probe (one per episode here),
// repeated FailedMount events and the kubelet's "timed out waiting for the
// condition" one, resource accounting beyond admission (requests are not
// enforced), eviction under pressure, resize conditions
// (PodResizePending, PodResizeInProgress), a final status write
// before the grace-0 delete, ServiceAccount checks for pods without a
// serviceAccountToken volume (the API server here does not inject the
// kube-api-access volume);
// the kubelet endpoint serves no /pods, /stats or /metrics, and
// /metrics/resource only under its per-node path.
package nodeagent
