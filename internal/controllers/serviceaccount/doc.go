// Package serviceaccount is the service-account controller of
// kube-controller-manager ("serviceaccount-controller"): every active
// namespace has a ServiceAccount named "default".
//
// # Contract
//
//	err := serviceaccount.Add(mgr, serviceaccount.Options{})
//
// Behaviour:
//
//   - A namespace that is added, or updated while in phase Active, is
//     synced; so is the namespace of a deleted ServiceAccount, so a
//     deleted "default" comes back.
//   - One sync (key = namespace name) reads the namespace from the cache;
//     if it is gone or not Active nothing happens. For each account to
//     ensure (only "default") missing from the cache it creates one with
//     only a name. AlreadyExists, and a refusal because the namespace is
//     terminating, are not errors; other errors are retried with backoff.
//   - It never updates or deletes a ServiceAccount: what users add to
//     "default" (imagePullSecrets, secrets, labels) stays.
package serviceaccount
