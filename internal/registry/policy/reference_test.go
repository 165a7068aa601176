package policy_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestPodDisruptionBudgetsAsReference replays requests (creates, updates,
// status updates) whose answers kube-apiserver v1.37.2 gave.
func TestPodDisruptionBudgetsAsReference(t *testing.T) {
	reftest.Run(t, "testdata/poddisruptionbudgets.json")
}
