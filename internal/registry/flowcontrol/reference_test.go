package flowcontrol_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestReference replays requests recorded against kube-apiserver v1.37.2
// (testdata/reference.json) and compares every answer.
func TestReference(t *testing.T) {
	reftest.Run(t, "testdata/reference.json")
}
