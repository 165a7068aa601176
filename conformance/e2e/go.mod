module github.com/setpoint-dev/setpoint/conformance/e2e

go 1.26.8

replace (
	github.com/setpoint-dev/setpoint => ../..
	github.com/setpoint-dev/setpoint/compat => ../../compat
)

require github.com/setpoint-dev/setpoint/compat v0.0.0-00010101000000-000000000000

require (
	github.com/setpoint-dev/setpoint v0.0.0-00010101000000-000000000000 // indirect
	github.com/setpoint-dev/setpoint/bench/cluster v0.0.0-00010101000000-000000000000
)

replace github.com/setpoint-dev/setpoint/bench/cluster => ../../bench/cluster
