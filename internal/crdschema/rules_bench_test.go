package crdschema

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/celbench"
)

// benchRulesObject is celbench's Gadget, valid for every rule.
var benchRulesObject = fmt.Sprintf(celbench.GadgetFormat, "bench.example.com", 1)

// BenchmarkValidateRules measures the ten rules of celbench (the schema and
// object of internal/apiserver's BenchmarkCreate) on a valid object (every
// rule runs in full), on create and on update.
func BenchmarkValidateRules(b *testing.B) {
	s := compile(b, celbench.Schema(celbench.TenRules))
	obj := object(b, benchRulesObject)
	old := object(b, benchRulesObject)
	if errs := s.ValidateRules(context.Background(), obj, nil); len(errs) > 0 {
		b.Fatal(errs)
	}
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for range b.N {
			s.ValidateRules(context.Background(), obj, nil)
		}
	})
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for range b.N {
			s.ValidateRules(context.Background(), obj, old)
		}
	})
}

// reportCPU reports the CPU time (user and system, of the whole process,
// garbage collection included) per iteration as cpu-ns/op: on a machine
// shared with other work it moves far less than ns/op, which counts the
// waiting for a CPU too. Call the returned function when the loop ends.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	b.ResetTimer()
	return func() {
		b.StopTimer()
		b.ReportMetric(float64((processCPU(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
