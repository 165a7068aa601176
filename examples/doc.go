// Package examples holds the seeds' controllers rewritten on setpoint's
// client library, each a small main package run against a real
// `setpoint apiserver` by the tests in e2e/examples_test.go:
//
//   - podprinter (seed 002): an informer of the pods of one namespace feeds
//     a rate-limited workqueue; one worker prints each pod it syncs, and
//     retries a failing key five times before dropping it.
//   - workerpool (seed 000 "WorkQueue 模式"): a shared informer factory with
//     a 30 s resync, a pod lister and two workers that report each pod's
//     phase and act on failed pods.
//
// They use only the public packages rest, informer, cache and workqueue,
// exactly as a user of the library would.
package examples
