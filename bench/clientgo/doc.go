// Package clientgo benchmarks setpoint's client machinery side by side
// with client-go's, in one run, on the same inputs. client-go appears only
// here, in a module of its own, as the reference setpoint is measured
// against; the product never imports it.
package clientgo
