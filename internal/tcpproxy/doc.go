// Package tcpproxy is a TCP proxy for tests that cut a client off from a
// server: connections through it are forwarded to the target, and the test
// decides when the network fails. Drop closes every open connection (a
// failing network path; new connections still go through); SetDown(true)
// drops them and refuses new ones until SetDown(false) (an outage);
// SetTarget sends later connections elsewhere (a server restarted on
// another port, reached at the same address); Cut ends the proxy for good,
// so the client behind it can no longer reach the server, as if its
// network were gone, while everyone else still can. It is for tests only;
// it makes no attempt at performance.
package tcpproxy
