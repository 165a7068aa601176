// Package tcpproxy is a TCP proxy for tests that cut a client off from a
// server: connections through it are forwarded to the target until Cut,
// which closes the listener and every connection, so the client behind it
// can no longer reach the server, as if its network were gone, while
// everyone else still can. It is for tests only; it makes no attempt at
// performance.
package tcpproxy
