// Package webhooks compares admission webhooks' failures on setpoint and
// on the real kube-apiserver v1.37.2: one HTTPS webhook server on
// loopback, registered on both with URL client configs, hangs, answers
// garbage, answers 500, presents a certificate of another CA, or refuses;
// for each failure mode and failurePolicy Fail and Ignore, both servers
// must answer a create with the same Status, and neither may store the
// object when the policy fails it.
//
// The reference is one started for the run, or the running kube-apiserver
// $SETPOINT_REFERENCE_KUBECONFIG names (refcluster.Use); the webhooks
// registered there match only the objects of this package's namespace
// (webhooks-diff) and label.
//
// The package has only tests.
package webhooks
