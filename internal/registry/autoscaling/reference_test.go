package autoscaling_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
)

// TestHorizontalPodAutoscalersAsReference replays requests through
// autoscaling/v2 and autoscaling/v1 whose answers kube-apiserver v1.37.2
// gave.
func TestHorizontalPodAutoscalersAsReference(t *testing.T) {
	reftest.Run(t, "testdata/horizontalpodautoscalers.json")
}
