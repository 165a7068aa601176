// Package testserver starts a real API server inside a Go test: real
// storage (the memory engine or bolt on disk in t.TempDir()), real HTTPS on
// a free loopback port, the real credentials. It returns what a client
// needs — the URL, the admin token and an HTTP client trusting the CA — and
// stops the server when the test ends. Server.Stop ends it earlier; Start
// again with the old Options.DataDir (and StorageBolt) restarts it on the
// same data and credentials, on a new port. Server.WaitWritesServed waits
// until the server serves no write, for tests that replace a client (a
// controller's restart) and want the state its canceled writes left.
//
// The servers of one test process that have no PKIDir share one
// service-account signing key (generated once, see sakey.go); everything
// else (CA, tokens, data) is each server's own.
//
// It is for this module's own tests; operator authors get a public test
// environment in a later issue.
package testserver
