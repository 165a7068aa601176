package apiserver_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// server the tests start (HTTP, watch caches, storage, compaction and
// metrics loops, watch handlers) must stop completely.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
