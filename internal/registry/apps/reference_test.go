package apps_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestReference replays the requests of testdata/reference.json and
// compares every answer with kube-apiserver v1.37.2's (package reftest).
func TestReference(t *testing.T) {
	reftest.Run(t, "testdata/reference.json")
}
