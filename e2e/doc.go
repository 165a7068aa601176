// Package e2e runs the setpoint binary as users run it — a separate
// process on a real port with its data on disk — and drives it with the
// real kubectl. It also holds the tests that need a process boundary, such
// as kill -9 during a write load.
//
// TestMain builds the binary once. kubectl is taken from $KUBECTL or PATH;
// a missing kubectl fails the tests (CI installs it), it never skips them.
//
// Every test owns its processes, data directories and ports, and runs in
// parallel with the others (`go test -parallel`, GOMAXPROCS by default):
// most of their time is spent waiting on pods, leases and kills, and the
// tests that count events in the middle of a run (the kill -9 tests) size
// their workloads so that they outlast the kills on a loaded machine.
package e2e
