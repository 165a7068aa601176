// Package reftest replays recorded requests against a real API server and
// compares every answer with the one kube-apiserver v1.37.2 gave to the
// same request: status code, reason, message and causes for rejections,
// the whole object (less what differs between any two servers: uids,
// timestamps, resourceVersions) for successes. A rejected write must leave
// the collection it addressed as it was (same resourceVersion, same items).
//
// Cases live in a kind package's testdata/reference.json. With
// SETPOINT_REFERENCE_KUBECONFIG naming the kubeconfig of a running
// kube-apiserver, Run sends the cases there instead and rewrites the file
// with its answers (the namespaces the cases use are created first and
// deleted after). Tests only.
package reftest
