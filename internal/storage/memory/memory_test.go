package memory_test

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/storage/memory"
	"github.com/setpoint-dev/setpoint/internal/storage/storagetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store { return memory.New() })
}

func BenchmarkCreate1KiB(b *testing.B) {
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s := memory.New()
			defer s.Close()
			storagetest.BenchmarkCreate(b, s, clients, 1024)
		})
	}
}

func BenchmarkList10000(b *testing.B) {
	s := memory.New()
	defer s.Close()
	storagetest.BenchmarkList(b, s, 10000, 1024)
}
