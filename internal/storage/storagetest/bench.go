package storagetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/storage"
)

// BenchmarkCreate measures b.N Creates of valueSize-byte values issued by
// clients concurrent goroutines, and reports creates/s.
func BenchmarkCreate(b *testing.B, s storage.Store, clients, valueSize int) {
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.SetBytes(int64(valueSize))
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if _, err := s.Create(b.Context(), fmt.Sprintf("bench/create/%010d", i), value); err != nil {
					b.Errorf("Create: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

// BenchmarkList fills the store with keys keys of valueSize bytes under
// one prefix, then measures listing all of them at the current revision.
func BenchmarkList(b *testing.B, s storage.Store, keys, valueSize int) {
	value := make([]byte, valueSize)
	var wg sync.WaitGroup
	const fillers = 16
	for g := range fillers {
		wg.Go(func() {
			for i := g; i < keys; i += fillers {
				if _, err := s.Create(b.Context(), fmt.Sprintf("bench/list/%08d", i), value); err != nil {
					b.Errorf("Create: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.List(b.Context(), "bench/list/", storage.ListOptions{})
		if err != nil || len(res.KVs) != keys {
			b.Fatalf("List = %d keys, %v; want %d", len(res.KVs), err, keys)
		}
	}
	b.ReportMetric(float64(b.N*keys)/b.Elapsed().Seconds(), "keys/s")
}
