//go:build tools

// Package sampleapiserver pins k8s.io/sample-apiserver, the aggregated API
// server its test builds and registers with setpoint.
package sampleapiserver

import _ "k8s.io/sample-apiserver"
