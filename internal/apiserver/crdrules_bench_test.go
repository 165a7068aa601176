package apiserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// benchGadgetCRD is one CRD, group and schema alike with and without
// rules: rules is the x-kubernetes-validations of spec (a JSON array, "[]"
// for none).
func benchGadgetCRD(group, rules string) string {
	return `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "gadgets.` + group + `"},
 "spec": {"group": "` + group + `", "scope": "Namespaced",
  "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
  "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "x-kubernetes-validations": ` + rules + `, "properties": {
     "minReplicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
     "mode": {"type": "string", "maxLength": 20},
     "endpoint": {"type": "string", "maxLength": 200},
     "memory": {"type": "string", "maxLength": 20},
     "hostname": {"type": "string", "maxLength": 253},
     "tags": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 63}},
     "listeners": {"type": "array", "maxItems": 8, "items": {"type": "object", "required": ["name", "port"], "properties": {
      "name": {"type": "string", "maxLength": 63}, "port": {"type": "integer"}, "protocol": {"type": "string", "maxLength": 10}}}}}},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}}}]}}`
}

// benchTenRules are ten rules of the kinds real CRDs carry (Gateway API,
// prometheus-operator, KEDA): field comparisons, has(), list macros over
// a small list, string functions, a regex, a quantity and a URL.
const benchTenRules = `[
 {"rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas", "fieldPath": ".minReplicas"},
 {"rule": "!has(self.mode) || self.mode in ['Fast', 'Slow']", "message": "unknown mode"},
 {"rule": "!(has(self.mode) && self.mode == 'Fast' && has(self.memory))", "message": "memory cannot be set in Fast mode"},
 {"rule": "!has(self.endpoint) || self.endpoint.startsWith('https://')", "messageExpression": "'endpoint ' + self.endpoint + ' must use https'"},
 {"rule": "!has(self.endpoint) || isURL(self.endpoint)", "message": "endpoint must be a URL"},
 {"rule": "!has(self.memory) || isQuantity(self.memory) && quantity(self.memory).isLessThan(quantity('64Gi'))", "message": "memory must be a quantity under 64Gi"},
 {"rule": "!has(self.hostname) || self.hostname.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')", "message": "hostname must be a DNS name"},
 {"rule": "!has(self.tags) || self.tags.all(k, k.size() < 64)", "message": "tag keys must be short"},
 {"rule": "!has(self.listeners) || self.listeners.all(l1, self.listeners.exists_one(l2, l1.name == l2.name))", "message": "listener names must be unique"},
 {"rule": "!has(self.listeners) || self.listeners.all(l, l.port > 0 && l.port < 65536)", "message": "ports must be valid"}
]`

// benchGadget is the object created: every field the rules look at is set
// (and valid), so every rule runs in full.
const benchGadget = `{"apiVersion": "%s/v1", "kind": "Gadget", "metadata": {"name": "g%d"},
 "spec": {"minReplicas": 1, "maxReplicas": 5, "mode": "Slow", "endpoint": "https://api.example.com/v1",
  "memory": "512Mi", "hostname": "gadget.example.com", "tags": {"team": "web", "tier": "front"},
  "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "https", "port": 443, "protocol": "HTTPS"},
   {"name": "metrics", "port": 9090, "protocol": "HTTP"}]}}`

// BenchmarkCreate measures a create of a custom resource over HTTP on an
// API server with memory storage, for the same CRD without validation
// rules and with ten (benchTenRules), in the same run. The separate
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
// group "ruled.bench.example.com" with benchTenRules, any other without
// rules) and returns a function that creates one gadget in a group and
// returns how long the request took.
func gadgetServer(b *testing.B, groups ...string) func(b *testing.B, group string) time.Duration {
	s := testserver.Start(b, testserver.Options{})
	for _, group := range groups {
		rules := "[]"
		if group == "ruled.bench.example.com" {
			rules = benchTenRules
		}
		if code, body, _ := s.Do(b, http.MethodPost, crdPath, "application/json", strings.NewReader(benchGadgetCRD(group, rules))); code != http.StatusCreated {
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
		body := fmt.Sprintf(benchGadget, group, next)
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
