package autoscaling_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/recorded"
)

// TestHorizontalPodAutoscalersAsReference replays requests through
// autoscaling/v2 and autoscaling/v1 whose answers kube-apiserver v1.37.2
// gave.
func TestHorizontalPodAutoscalersAsReference(t *testing.T) {
	recorded.Run(t, "testdata/horizontalpodautoscalers.json")
}
