// Package celbench holds the workload of the benchmarks of CEL validation
// rules in CustomResourceDefinitions (issue 15): a CRD, ten rules of the
// kinds real CRDs carry, and an object that makes every rule run. Setpoint's
// BenchmarkCreate (internal/apiserver) and the reference measurement
// (compat/cmd/extendcost, on kube-apiserver) create the same objects.
package celbench

// GadgetCRD is the Gadget CRD of group with Schema(rules), group and
// schema alike with and without rules.
func GadgetCRD(group, rules string) string {
	return `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "gadgets.` + group + `"},
 "spec": {"group": "` + group + `", "scope": "Namespaced",
  "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
  "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
   "schema": {"openAPIV3Schema": ` + Schema(rules) + `}}]}}`
}

// Schema is the Gadget's OpenAPI schema: rules is the
// x-kubernetes-validations of spec (a JSON array, "[]" for none).
func Schema(rules string) string {
	return `{"type": "object", "properties": {
    "spec": {"type": "object", "x-kubernetes-validations": ` + rules + `, "properties": {
     "minReplicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
     "mode": {"type": "string", "maxLength": 20},
     "endpoint": {"type": "string", "maxLength": 200},
     "memory": {"type": "string", "maxLength": 20},
     "hostname": {"type": "string", "maxLength": 253},
     "tags": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 63}},
     "listeners": {"type": "array", "maxItems": 8, "items": {"type": "object", "required": ["name", "port"], "properties": {
      "name": {"type": "string", "maxLength": 63}, "port": {"type": "integer"}, "protocol": {"type": "string", "maxLength": 10}}}}}},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}`
}

// TenRules are ten rules of the kinds real CRDs carry (Gateway API,
// prometheus-operator, KEDA): field comparisons, has(), list macros over
// a small list, string functions, a regex, a quantity and a URL.
const TenRules = `[
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

// GadgetFormat is the object created: every field the rules look at is set
// (and valid), so every rule runs in full.
const GadgetFormat = `{"apiVersion": "%s/v1", "kind": "Gadget", "metadata": {"name": "g%d"},
 "spec": {"minReplicas": 1, "maxReplicas": 5, "mode": "Slow", "endpoint": "https://api.example.com/v1",
  "memory": "512Mi", "hostname": "gadget.example.com", "tags": {"team": "web", "tier": "front"},
  "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "https", "port": 443, "protocol": "HTTPS"},
   {"name": "metrics", "port": 9090, "protocol": "HTTP"}]}}`
