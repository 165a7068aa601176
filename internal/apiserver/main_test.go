package apiserver_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/apfflood"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// server the tests start (HTTP, watch caches, storage, compaction and
// metrics loops, watch handlers) must stop completely.
// As the flooding client of TestPriorityAndFairnessFlood (floodEnv), the
// binary floods and exits instead.
func TestMain(m *testing.M) {
	if order := os.Getenv(floodEnv); order != "" {
		os.Exit(apfflood.Child(order))
	}
	goleak.VerifyTestMain(m)
}
