// Package defaulttolerationseconds is the DefaultTolerationSeconds
// admission plugin, after Kubernetes'
// plugin/pkg/admission/defaulttolerationseconds: a pod (created or
// updated, main resource) that does not tolerate the NoExecute taints
// node.kubernetes.io/not-ready and node.kubernetes.io/unreachable gets
// the tolerations {key, operator Exists, effect NoExecute,
// tolerationSeconds 300} for them. A toleration with that key, or with an
// empty key (all taints), and effect NoExecute or empty (all effects)
// counts as tolerating.
//
// With these tolerations the node lifecycle controller's taint eviction
// deletes a pod of a dead node five minutes after the taint, as in
// Kubernetes; a pod that tolerates the taint itself sets its own time.
package defaulttolerationseconds
