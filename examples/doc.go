// Package examples holds the seeds' controllers rewritten on setpoint's
// client library, each tested as a user would run it: the simple ones by
// e2e/examples_test.go against a real `setpoint apiserver`, the operators
// with real kubectl against `setpoint up` (e2e/autoservice_test.go,
// e2e/application_test.go, e2e/statemachine_test.go), and all of them in
// their own packages' tests on testenv:
//
//   - podprinter (seed 002): an informer of the pods of one namespace feeds
//     a rate-limited workqueue; one worker prints each pod it syncs, and
//     retries a failing key five times before dropping it.
//   - workerpool (seed 000 "WorkQueue 模式"): a shared informer factory with
//     a 30 s resync, a pod lister and two workers that report each pod's
//     phase and act on failed pods.
//   - autoservice (seed 000 "完整 Controller 示例"): a Service for every
//     Deployment annotated auto-service: "true", kept as desired, removed
//     with the annotation, collected with the Deployment.
//   - application (seed 001 §8.3, seed 004 §5 and §7): the Application
//     CRD reconciled into a Deployment and a Service, status from the pods'
//     readiness, a finalizer that removes an external record, events.
//   - statemachine (seed 004 §6.3): a Database resource moving Pending →
//     Provisioning → Running → Updating → Running, Failed with retries, and
//     Terminating on delete, waiting with RequeueAfter.
//
// The first two use only rest, informer, cache and workqueue; the
// operators use the controller runtime (manager, builder, controllerutil).
package examples
