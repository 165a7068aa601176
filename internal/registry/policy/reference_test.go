package policy_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/recorded"
)

// TestPodDisruptionBudgetsAsReference replays requests (creates, updates,
// status updates) whose answers kube-apiserver v1.37.2 gave.
func TestPodDisruptionBudgetsAsReference(t *testing.T) {
	recorded.Run(t, "testdata/poddisruptionbudgets.json")
}
