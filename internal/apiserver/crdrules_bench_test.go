package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/celbench"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// BenchmarkCreate measures a create of a custom resource over HTTP on an
// API server with memory storage, for the same CRD without validation
// rules and with ten (celbench.TenRules), in the same run. The separate
// variants each start a server of their own, so that neither runs on a
// server the other has filled, and report the process's CPU time per
// create too (cpu-ns/op; client and server together). The interleaved
// variant alternates the two on one server in each iteration (the fairest
// wall-clock comparison on a loaded machine) and reports both and the
// difference: what ten CEL rules add to one write.
func BenchmarkCreate(b *testing.B) {
	plain, ruled := "plain.bench.example.com", "ruled.bench.example.com"
	for _, c := range []struct{ name, group string }{{"rules=0", plain}, {"rules=10", ruled}} {
		b.Run(c.name, func(b *testing.B) {
			create := gadgetServer(b, c.group)
			b.ResetTimer()
			cpu := processCPU(b)
			for range b.N {
				create(b, c.group)
			}
			b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		create := gadgetServer(b, plain, ruled)
		b.ResetTimer()
		var without, with time.Duration
		for range b.N {
			without += create(b, plain)
			with += create(b, ruled)
		}
		n := float64(b.N)
		b.ReportMetric(float64(without.Microseconds())/n, "us/create-rules=0")
		b.ReportMetric(float64(with.Microseconds())/n, "us/create-rules=10")
		b.ReportMetric(float64((with-without).Microseconds())/n, "us-added-by-rules")
	})
}

// gadgetServer starts a server serving the Gadget CRD of each group (the
// group "ruled.bench.example.com" with celbench.TenRules, any other without
// rules) and returns a function that creates one gadget in a group and
// returns how long the request took.
func gadgetServer(b *testing.B, groups ...string) func(b *testing.B, group string) time.Duration {
	s := testserver.Start(b, testserver.Options{})
	for _, group := range groups {
		rules := "[]"
		if group == "ruled.bench.example.com" {
			rules = celbench.TenRules
		}
		if code, body, _ := s.Do(b, http.MethodPost, crdPath, "application/json", strings.NewReader(celbench.GadgetCRD(group, rules))); code != http.StatusCreated {
			b.Fatalf("create CRD %s: %d %s", group, code, body)
		}
		list := "/apis/" + group + "/v1/namespaces/default/gadgets"
		waitFor(b, list+" served", func() bool {
			code, _, _ := s.Do(b, http.MethodGet, list, "", nil)
			return code == http.StatusOK
		})
	}
	next := 0
	return func(b *testing.B, group string) time.Duration {
		next++
		body := fmt.Sprintf(celbench.GadgetFormat, group, next)
		start := time.Now()
		code, resp, _ := s.Do(b, http.MethodPost, "/apis/"+group+"/v1/namespaces/default/gadgets", "application/json", bytes.NewReader([]byte(body)))
		d := time.Since(start)
		if code != http.StatusCreated {
			b.Fatalf("create: %d %s", code, resp)
		}
		return d
	}
}

// processCPU is the CPU time (user and system) the process has used: the
// client and the server are one process here, so per operation it is what
// a create costs in CPU, which a loaded machine changes far less than the
// time a create takes.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
