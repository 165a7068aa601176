package crdschema

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiserver/pkg/warning"
)

// rulesSchema has rules at every level: the root (metadata), an object
// (fieldPath, messageExpression, reasons), scalars (transition rules,
// optionalOldSelf), list items, map values, list-map items, an embedded
// resource and status; and Kubernetes' CEL libraries (lists, regex, URLs,
// quantities, IPs and CIDRs, format, semver).
const rulesSchema = `
type: object
x-kubernetes-validations:
- {rule: "self.metadata.name.startsWith('w')", message: "name must start with w"}
properties:
  spec:
    type: object
    x-kubernetes-validations:
    - {rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas", message: "minReplicas must not exceed maxReplicas", fieldPath: ".minReplicas"}
    - {rule: "!has(self.endpoint) || self.endpoint.startsWith('https://')", messageExpression: "'endpoint ' + self.endpoint + ' must use https'"}
    - {rule: "!has(self.owner) || self.owner != ''", message: "owner must not be empty", reason: FieldValueRequired, fieldPath: ".owner"}
    - {rule: "!has(self.mode) || self.mode != 'legacy'", message: "legacy mode is forbidden", reason: FieldValueForbidden, fieldPath: ".mode"}
    - {rule: "!has(self.primary) || !has(self.secondary) || self.primary != self.secondary", message: "unused", reason: FieldValueDuplicate, fieldPath: ".secondary"}
    - {rule: "!has(self.size) || self.size < 100"}
    properties:
      minReplicas: {type: integer}
      maxReplicas: {type: integer}
      size: {type: integer}
      endpoint: {type: string, maxLength: 256}
      owner: {type: string}
      mode: {type: string}
      primary: {type: string, maxLength: 64}
      secondary: {type: string, maxLength: 64}
      tier: {type: string, maxLength: 16, x-kubernetes-validations: [{rule: "!(oldSelf == 'gold' && self != 'gold')", messageExpression: "'tier cannot be downgraded from ' + oldSelf"}]}
      fixed: {type: string, maxLength: 64, x-kubernetes-validations: [{rule: "self == oldSelf", message: "fixed is immutable"}]}
      born: {type: string, maxLength: 64, x-kubernetes-validations: [{rule: "oldSelf.hasValue() || self != 'bad'", optionalOldSelf: true, message: "cannot be created as bad"}]}
      tags:
        type: array
        maxItems: 10
        x-kubernetes-validations: [{rule: "self.isSorted()", message: "tags must be sorted"}]
        items: {type: string, maxLength: 20, x-kubernetes-validations: [{rule: "self.matches('^[a-z]+$')", message: "tags are lower-case words"}]}
      limits:
        type: object
        maxProperties: 10
        additionalProperties: {type: string, maxLength: 20, x-kubernetes-validations: [{rule: "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))", message: "must be a quantity below 1Gi"}]}
      ports:
        type: array
        maxItems: 10
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items:
          type: object
          required: [name]
          properties:
            name: {type: string, maxLength: 20}
            port: {type: integer, x-kubernetes-validations: [{rule: "self == oldSelf", message: "the port of a named entry is immutable"}]}
      network:
        type: object
        x-kubernetes-validations: [{rule: "!has(self.addr) || !has(self.cidr) || (isIP(self.addr) && isCIDR(self.cidr) && cidr(self.cidr).containsIP(self.addr))", message: "addr must be in cidr"}]
        properties: {addr: {type: string, maxLength: 64}, cidr: {type: string, maxLength: 64}}
      url: {type: string, maxLength: 256, x-kubernetes-validations: [{rule: "isURL(self) && url(self).getHostname() != 'localhost'", message: "url must not point to localhost"}]}
      label: {type: string, maxLength: 64, x-kubernetes-validations: [{rule: "!format.dns1123Label().validate(self).hasValue()", messageExpression: "format.dns1123Label().validate(self).value()[0]"}]}
      version: {type: string, maxLength: 64, x-kubernetes-validations: [{rule: "isSemver(self) && semver(self).isGreaterThan(semver('1.0.0'))", message: "version must be a semver above 1.0.0"}]}
      template:
        type: object
        x-kubernetes-embedded-resource: true
        x-kubernetes-preserve-unknown-fields: true
        x-kubernetes-validations: [{rule: "self.kind == 'ConfigMap'", message: "only ConfigMaps"}]
  status:
    type: object
    properties:
      phase: {type: string, maxLength: 16, x-kubernetes-validations: [{rule: "self in ['Pending', 'Ready']", message: "unknown phase"}]}
`

func TestValidateRules(t *testing.T) {
	s := compile(t, rulesSchema)
	if !s.HasRules() {
		t.Fatal("HasRules = false")
	}
	cases := []struct {
		name     string
		obj, old string // old "" is a create
		want     []string
	}{
		{"valid", `{"metadata":{"name":"w1"},"spec":{"minReplicas":1,"maxReplicas":2,"endpoint":"https://x","owner":"me","mode":"new","primary":"a","secondary":"b","tier":"gold","fixed":"f","born":"ok","tags":["a","b"],"limits":{"mem":"512Mi"},"ports":[{"name":"http","port":80}],"network":{"addr":"10.0.0.1","cidr":"10.0.0.0/8"},"url":"https://example.com/x","label":"ok-label","version":"1.2.3","template":{"apiVersion":"v1","kind":"ConfigMap"}},"status":{"phase":"Ready"}}`, "", nil},
		{"root rule on metadata", `{"metadata":{"name":"x1"}}`, "",
			[]string{"<nil>: Invalid value: name must start with w"}},
		{"fieldPath", `{"metadata":{"name":"w"},"spec":{"minReplicas":5,"maxReplicas":3}}`, "",
			[]string{"spec.minReplicas: Invalid value: minReplicas must not exceed maxReplicas"}},
		{"messageExpression", `{"metadata":{"name":"w"},"spec":{"endpoint":"http://plain"}}`, "",
			[]string{"spec: Invalid value: endpoint http://plain must use https"}},
		{"reason Required", `{"metadata":{"name":"w"},"spec":{"owner":""}}`, "",
			[]string{"spec.owner: Required value: owner must not be empty"}},
		{"reason Forbidden", `{"metadata":{"name":"w"},"spec":{"mode":"legacy"}}`, "",
			[]string{"spec.mode: Forbidden: legacy mode is forbidden"}},
		{"reason Duplicate", `{"metadata":{"name":"w"},"spec":{"primary":"a","secondary":"a"}}`, "",
			[]string{"spec.secondary: Duplicate value"}},
		{"no message", `{"metadata":{"name":"w"},"spec":{"size":100}}`, "",
			[]string{"spec: Invalid value: failed rule: !has(self.size) || self.size < 100"}},
		{"transition rules skipped on create", `{"metadata":{"name":"w"},"spec":{"tier":"silver","fixed":"a","ports":[{"name":"a","port":1}]}}`, "", nil},
		{"transition rule on a scalar", `{"metadata":{"name":"w"},"spec":{"tier":"silver"}}`, `{"metadata":{"name":"w"},"spec":{"tier":"gold"}}`,
			[]string{`spec.tier: Invalid value: "silver": tier cannot be downgraded from gold`}},
		{"immutable", `{"metadata":{"name":"w"},"spec":{"fixed":"b"}}`, `{"metadata":{"name":"w"},"spec":{"fixed":"a"}}`,
			[]string{`spec.fixed: Invalid value: "b": fixed is immutable`}},
		{"transition rule on a new field is skipped", `{"metadata":{"name":"w"},"spec":{"fixed":"b"}}`, `{"metadata":{"name":"w"},"spec":{}}`, nil},
		{"optionalOldSelf on create", `{"metadata":{"name":"w"},"spec":{"born":"bad"}}`, "",
			[]string{`spec.born: Invalid value: "bad": cannot be created as bad`}},
		{"optionalOldSelf on update", `{"metadata":{"name":"w"},"spec":{"born":"bad"}}`, `{"metadata":{"name":"w"},"spec":{"born":"good"}}`, nil},
		{"list rule and item rules", `{"metadata":{"name":"w"},"spec":{"tags":["b","A"]}}`, "",
			[]string{"spec.tags: Invalid value: tags must be sorted", `spec.tags[1]: Invalid value: "A": tags are lower-case words`}},
		{"map values and quantities", `{"metadata":{"name":"w"},"spec":{"limits":{"cpu":"2Gi","mem":"lots"}}}`, "",
			[]string{`spec.limits[cpu]: Invalid value: "2Gi": must be a quantity below 1Gi`, `spec.limits[mem]: Invalid value: "lots": must be a quantity below 1Gi`}},
		{"list-map items correlate by key", `{"metadata":{"name":"w"},"spec":{"ports":[{"name":"b","port":3},{"name":"a","port":2}]}}`, `{"metadata":{"name":"w"},"spec":{"ports":[{"name":"a","port":1}]}}`,
			[]string{"spec.ports[1].port: Invalid value: 2: the port of a named entry is immutable"}},
		{"IPs and CIDRs", `{"metadata":{"name":"w"},"spec":{"network":{"addr":"192.168.0.1","cidr":"10.0.0.0/8"}}}`, "",
			[]string{"spec.network: Invalid value: addr must be in cidr"}},
		{"URLs", `{"metadata":{"name":"w"},"spec":{"url":"http://localhost:8080/"}}`, "",
			[]string{`spec.url: Invalid value: "http://localhost:8080/": url must not point to localhost`}},
		{"format library", `{"metadata":{"name":"w"},"spec":{"label":"Not_A_Label"}}`, "",
			[]string{`spec.label: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
		{"semver", `{"metadata":{"name":"w"},"spec":{"version":"0.9.0"}}`, "",
			[]string{`spec.version: Invalid value: "0.9.0": version must be a semver above 1.0.0`}},
		{"embedded resource", `{"metadata":{"name":"w"},"spec":{"template":{"apiVersion":"v1","kind":"Secret"}}}`, "",
			[]string{"spec.template: Invalid value: only ConfigMaps"}},
		{"status", `{"metadata":{"name":"w"},"status":{"phase":"Lost"}}`, "",
			[]string{`status.phase: Invalid value: "Lost": unknown phase`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var old map[string]any
			if tc.old != "" {
				old = object(t, tc.old)
			}
			got := errorStrings(s.ValidateRules(context.Background(), object(t, tc.obj), old))
			sort.Strings(got)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
			sameAsKubernetes(t, s, object(t, tc.obj), old)
		})
	}
}

// warnings records warnings as kube-apiserver's request context does.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// TestRulesRatchet: on update, a rule without oldSelf that fails on a
// value equal to its old value is a warning, not an error; a changed value
// is checked; transition rules are never ratcheted.
func TestRulesRatchet(t *testing.T) {
	s := compile(t, rulesSchema)
	old := object(t, `{"metadata":{"name":"w"},"spec":{"tags":["b","A"],"url":"http://localhost/","tier":"gold","minReplicas":1}}`)
	cases := []struct {
		name         string
		obj          string
		errs, warned []string
	}{
		{"unchanged invalid values", `{"metadata":{"name":"w"},"spec":{"tags":["b","A"],"url":"http://localhost/","tier":"gold","minReplicas":2}}`, nil,
			[]string{`spec.tags[1]: Invalid value: "A": tags are lower-case words`, `spec.url: Invalid value: "http://localhost/": url must not point to localhost`, "spec.tags: Invalid value: tags must be sorted"}},
		{"changed invalid value", `{"metadata":{"name":"w"},"spec":{"tags":["b","A"],"url":"http://localhost:80/","tier":"gold"}}`,
			[]string{`spec.url: Invalid value: "http://localhost:80/": url must not point to localhost`},
			[]string{`spec.tags[1]: Invalid value: "A": tags are lower-case words`, "spec.tags: Invalid value: tags must be sorted"}},
		{"a changed list is checked whole", `{"metadata":{"name":"w"},"spec":{"tags":["c","A"],"url":"http://localhost/","tier":"gold"}}`,
			[]string{`spec.tags[1]: Invalid value: "A": tags are lower-case words`, "spec.tags: Invalid value: tags must be sorted"},
			[]string{`spec.url: Invalid value: "http://localhost/": url must not point to localhost`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &warnings{}
			ctx := warning.WithWarningRecorder(context.Background(), w)
			got := errorStrings(s.ValidateRules(ctx, object(t, tc.obj), old))
			sort.Strings(got)
			sort.Strings(w.list)
			sort.Strings(tc.errs)
			sort.Strings(tc.warned)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.errs) || !reflect.DeepEqual(w.list, tc.warned) {
				t.Errorf("errors %q, warnings %q; want %q, %q", got, w.list, tc.errs, tc.warned)
			}
			sameAsKubernetes(t, s, object(t, tc.obj), old)
		})
	}
}

// TestSchemaRatchet: on update, OpenAPI schema errors of unchanged values
// are dropped; changed values and new list-type duplicates are reported.
func TestSchemaRatchet(t *testing.T) {
	s := compile(t, validateSchema)
	old := object(t, `{"spec":{"image":"nginx","replicas":20,"mode":"warp","tags":["a","a"]}}`)
	cases := []struct {
		name string
		obj  string
		want []string
	}{
		{"unchanged invalid values", `{"spec":{"image":"other","replicas":20,"mode":"warp","tags":["a","a"]}}`, nil},
		{"changed invalid value", `{"spec":{"image":"nginx","replicas":21,"mode":"warp","tags":["a","a"]}}`,
			[]string{"spec.replicas: Invalid value: 21: spec.replicas in body should be less than or equal to 10"}},
		{"removed required field", `{"spec":{"replicas":20,"mode":"warp","tags":["a","a"]}}`,
			[]string{"spec.image: Required value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(s.ValidateUpdate(object(t, tc.obj), old))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	// Duplicates are new when old had none.
	fresh := object(t, `{"spec":{"image":"nginx","tags":["a"]}}`)
	got := errorStrings(s.ValidateUpdate(object(t, `{"spec":{"image":"nginx","tags":["a","a"]}}`), fresh))
	if want := []string{`spec.tags[1]: Duplicate value: "a"`}; !reflect.DeepEqual(got, want) {
		t.Errorf("new duplicates: %q, want %q", got, want)
	}
}

// TestValidateStatusUpdate: the status subresource validates status only.
func TestValidateStatusUpdate(t *testing.T) {
	s := compile(t, `
type: object
properties:
  spec: {type: object, required: [image], properties: {image: {type: string}}}
  status: {type: object, properties: {replicas: {type: integer, minimum: 0}, phase: {type: string, enum: [A, B]}}}
`)
	old := object(t, `{"spec":{},"status":{"phase":"C"}}`)
	got := errorStrings(s.ValidateStatusUpdate(object(t, `{"spec":{},"status":{"phase":"C","replicas":-1}}`), old))
	// As in Kubernetes, the status schema is validated on its own: the
	// detail names the field relative to status.
	want := []string{"status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRulesBlocked(t *testing.T) {
	s := compile(t, validateSchema)
	errs := s.Validate(object(t, `{"spec":{"replicas":0}}`))
	if b := RulesBlocked(errs); b == nil || b.Error() != "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation" {
		t.Errorf("RulesBlocked(required missing) = %v", b)
	}
	if b := RulesBlocked(s.Validate(object(t, `{"spec":{"image":"x","replicas":0}}`))); b != nil {
		t.Errorf("RulesBlocked(minimum) = %v, want nil", b)
	}
}

// costSchema has five item rules, each estimated under the per-expression
// limit (ten items of at most 50,000 characters against a long regular
// expression), which on ten full-length items together spend more than the
// runtime budget of one object; and one rule whose single evaluation on a
// long string spends more than the limit of one call.
func costSchema() string {
	alt := strings.Repeat("a|", 93)
	var rules []string
	for _, c := range []string{"b", "c", "d", "e", "f"} {
		rules = append(rules, `      - {rule: "self.matches('^(`+alt+c+`)*$')", message: "`+c+`"}`)
	}
	return `
type: object
properties:
  big:
    type: array
    maxItems: 10
    items:
      type: string
      maxLength: 50000
      x-kubernetes-validations:
` + strings.Join(rules, "\n") + `
  one: {type: string, maxLength: 250000, x-kubernetes-validations: [{rule: "self.matches('^(` + alt + `b)*$')", message: "one"}]}
`
}

// TestRuleRuntimeCost: kube-apiserver's runtime limits, per call and per
// object, with its messages.
func TestRuleRuntimeCost(t *testing.T) {
	s := compile(t, costSchema())
	item := `"` + strings.Repeat("a", 50000) + `"`
	cases := []struct {
		name, obj string
		want      []string
	}{
		{"within the budget", `{"big":[` + item + strings.Repeat(","+item, 4) + `]}`, nil},
		{"object budget", `{"big":[` + item + strings.Repeat(","+item, 9) + `]}`,
			[]string{`big[8]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run`}},
		{"call limit", `{"one":"` + strings.Repeat("a", 250000) + `"}`,
			[]string{`one: Invalid value: "string": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: one`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(s.ValidateRules(context.Background(), object(t, tc.obj), nil))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
			sameAsKubernetes(t, s, object(t, tc.obj), nil)
		})
	}
}
