// Package webhooks compares admission webhooks' failures on setpoint and
// on the real kube-apiserver v1.37.2: one HTTPS webhook server on
// loopback, registered on both with URL client configs, hangs, answers
// garbage, answers 500, presents a certificate of another CA, or refuses;
// for each failure mode and failurePolicy Fail and Ignore, both servers
// must answer a create with the same Status, and neither may store the
// object when the policy fails it.
//
// The reference is the shared kube-apiserver the kubeconfig
// $WEBHOOKS_REFERENCE_KUBECONFIG names (default /work/refdump/kubeconfig,
// https://127.0.0.1:16443); the webhooks registered there match only the
// objects of this package's namespace (webhooks-diff) and label. Without
// a reachable reference the test is skipped, saying so.
//
// The package has only tests.
package webhooks
