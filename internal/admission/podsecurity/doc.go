// Package podsecurity is the PodSecurity admission plugin: the Pod Security
// Standards (privileged, baseline, restricted) applied to pods by the
// labels of their namespace, as kube-apiserver v1.37's PodSecurity
// validating admission plugin applies them.
//
// # Policies
//
// A namespace chooses a level and a version for each of three modes with
// the labels pod-security.kubernetes.io/{enforce,audit,warn} and
// …/{enforce,audit,warn}-version; a mode not labelled takes the
// configuration's default (privileged:latest unless configured). A version
// is "latest" or v1.x: each check applies from the version it was added
// in, in the form it had at that version, so a namespace pinned to v1.24
// is judged as kube-apiserver v1.24 judged it; versions past the newest
// check (v1.37) and latest run the newest checks. When only enforce is
// labelled, warn follows it.
//
// # What it promises
//
//   - Pods (create; updates that change an image or the containers, and
//     the ephemeralcontainers and resize subresources) failing the enforce
//     level are refused with 403, worded as kube-apiserver: `pods "p" is
//     forbidden: violates PodSecurity "restricted:latest":
//     allowPrivilegeEscalation != false (container "c" must set
//     securityContext.allowPrivilegeEscalation=false), …`, each failed
//     check's reason and detail in kube-apiserver's order (baseline checks
//     by id, then restricted ones).
//   - Pods and workload templates (ReplicationControllers, PodTemplates,
//     ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs, CronJobs;
//     never refused) failing the warn level get the Warning `would violate
//     PodSecurity "…": …` (registry.AddWarning), and those failing the
//     audit level the audit annotation
//     pod-security.kubernetes.io/audit-violations; enforce-policy, exempt
//     and error annotations are recorded as kube-apiserver records them,
//     through Options.Annotate, and counted in kube-apiserver's
//     pod_security_evaluations_total, _exemptions_total and _errors_total
//     (registered on Options.Metrics).
//   - Namespaces with malformed policy labels are refused with 422 (on
//     create, and on update when the errors changed); making a namespace's
//     enforce level stricter warns about its existing pods: `existing pods
//     in namespace "ns" violate the new PodSecurity enforce level "…"`
//     and one line per distinct list of reasons (`p (and 2 other pods):
//     privileged, hostPort`), checking at most 3000 pods within a second.
//   - Exemptions (Config: usernames, runtime classes, namespaces) skip
//     the checks, as kube-apiserver's PodSecurityConfiguration.
//
// # Where it sits
//
// It is a validating admission plugin (Name, Validate with the signature
// of registry.AdmitFunc): it runs after the strategy's validation, reads
// the namespace (and, for namespace updates, its pods) through
// registry.Env, changes nothing and takes nothing. It recognises the
// resource of a write by the type of its object (v1 Pod, Namespace and the
// workload types); writes of anything else pass.
package podsecurity
