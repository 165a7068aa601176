package apps_test

import (
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry/recorded"
)

// The tests below replay requests (creates, updates, status updates)
// whose answers kube-apiserver v1.37.2 gave.

func TestStatefulSetsAsReference(t *testing.T) { recorded.Run(t, "testdata/statefulsets.json") }

func TestDaemonSetsAsReference(t *testing.T) { recorded.Run(t, "testdata/daemonsets.json") }

func TestControllerRevisionsAsReference(t *testing.T) {
	recorded.Run(t, "testdata/controllerrevisions.json")
}
