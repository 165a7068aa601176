// Package controlplane assembles a running control plane from its parts:
// it opens the store the options name, builds the scheme and the served
// resources, and runs the API server. The setpoint command and the tests
// start servers only through it, so both run the same wiring.
//
// Controllers, the scheduler and simulated nodes join the control plane in
// later work; today it runs the API server.
package controlplane
