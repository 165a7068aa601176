// Package e2e runs the setpoint binary as users run it — a separate
// process on a real port with its data on disk — and drives it with the
// real kubectl. It also holds the tests that need a process boundary, such
// as kill -9 during a write load.
//
// TestMain builds the binary once. kubectl is taken from $KUBECTL or PATH;
// a missing kubectl fails the tests (CI installs it), it never skips them.
package e2e
