package manager_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// manager that stopped must have stopped its informers, controllers,
// elector and servers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
