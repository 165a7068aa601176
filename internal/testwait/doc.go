// Package testwait is the one way this module's tests wait for something
// that happens asynchronously (a controller converging, a cache catching
// up, a goroutine reaching a point): poll a condition at an interval until
// it holds, and fail the test when a deadline passes, saying what was
// awaited and what the condition answered last.
//
// # Contract
//
//   - The condition is asked at once, then after every interval, until it
//     returns nil. It runs on the caller's goroutine (Until calls
//     t.Fatalf, so it must be called from the test's goroutine).
//   - No pause runs past the deadline: the last one is cut short at the
//     deadline, where the condition is asked a final time, so a condition
//     that holds by then passes, and a wait lasts at most its timeout plus
//     one run of the condition.
//   - On failure the message names the wait, the time waited and the
//     condition's last answer (an error: Bool, Reason and Check adapt
//     conditions that answer a bool, a reason string or both).
//   - Until honours the test's context (t.Context()): a wait still running
//     when the test ends gives up at once. A wait that starts after the
//     context ended (in a t.Cleanup function) runs to its own deadline.
//     Poll takes the context explicitly and returns an error instead of
//     failing a test, for waits outside a test's goroutine.
//   - The deadline is the caller's: each test keeps its own timeout, a
//     hang guard rather than a timing assertion.
//   - A condition that only a fake clock makes true (a controller that
//     requeues after a delay on an injected clock) waits with
//     PollStepping: it polls for a short window of real time, then calls
//     the caller's step (which advances the fake clock) and polls again,
//     for at most a given number of rounds. It takes no clock type, so
//     the package imports nothing of the module or of a clock library.
//
// # Why internal, and not part of testenv
//
// Package testenv (public) offers operator authors the same wait as
// testenv.Eventually, built on this package, so there is one
// implementation and the module exports one test helper for it. The
// helper itself lives here, in a leaf package that imports nothing of the
// module, because the internal tests of the packages testenv is built on
// (rest, informer, reflector, manager, leaderelection, ...) cannot import
// testenv without an import cycle.
package testwait
