package crdschema

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// benchRulesSchema is a spec with ten rules of the kinds real CRDs carry
// (the schema of internal/apiserver's BenchmarkCreate).
const benchRulesSchema = `
type: object
properties:
  spec:
    type: object
    x-kubernetes-validations:
    - {rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas", message: "minReplicas must not exceed maxReplicas", fieldPath: ".minReplicas"}
    - {rule: "!has(self.mode) || self.mode in ['Fast', 'Slow']", message: "unknown mode"}
    - {rule: "!(has(self.mode) && self.mode == 'Fast' && has(self.memory))", message: "memory cannot be set in Fast mode"}
    - {rule: "!has(self.endpoint) || self.endpoint.startsWith('https://')", messageExpression: "'endpoint ' + self.endpoint + ' must use https'"}
    - {rule: "!has(self.endpoint) || isURL(self.endpoint)", message: "endpoint must be a URL"}
    - {rule: "!has(self.memory) || isQuantity(self.memory) && quantity(self.memory).isLessThan(quantity('64Gi'))", message: "memory must be a quantity under 64Gi"}
    - {rule: "!has(self.hostname) || self.hostname.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')", message: "hostname must be a DNS name"}
    - {rule: "!has(self.tags) || self.tags.all(k, k.size() < 64)", message: "tag keys must be short"}
    - {rule: "!has(self.listeners) || self.listeners.all(l1, self.listeners.exists_one(l2, l1.name == l2.name))", message: "listener names must be unique"}
    - {rule: "!has(self.listeners) || self.listeners.all(l, l.port > 0 && l.port < 65536)", message: "ports must be valid"}
    properties:
      minReplicas: {type: integer}
      maxReplicas: {type: integer}
      mode: {type: string, maxLength: 20}
      endpoint: {type: string, maxLength: 200}
      memory: {type: string, maxLength: 20}
      hostname: {type: string, maxLength: 253}
      tags: {type: object, maxProperties: 10, additionalProperties: {type: string, maxLength: 63}}
      listeners:
        type: array
        maxItems: 8
        items:
          type: object
          required: [name, port]
          properties:
            name: {type: string, maxLength: 63}
            port: {type: integer}
            protocol: {type: string, maxLength: 10}
  status: {type: object, properties: {phase: {type: string}}}
`

const benchRulesObject = `{"apiVersion": "bench.example.com/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": "default"},
 "spec": {"minReplicas": 1, "maxReplicas": 5, "mode": "Slow", "endpoint": "https://api.example.com/v1",
  "memory": "512Mi", "hostname": "gadget.example.com", "tags": {"team": "web", "tier": "front"},
  "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "https", "port": 443, "protocol": "HTTPS"},
   {"name": "metrics", "port": 9090, "protocol": "HTTP"}]}}`

// BenchmarkValidateRules measures the ten rules of benchRulesSchema on a
// valid object (every rule runs in full), on create and on update.
func BenchmarkValidateRules(b *testing.B) {
	s := compile(b, benchRulesSchema)
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
