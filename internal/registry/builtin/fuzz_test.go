package builtin

import (
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/scheme"
)

// FuzzStrategies decodes arbitrary bytes as an object of each built-in
// kind, through the server's JSON codec, and runs every hook on it: none
// may panic, and Default must be idempotent.
func FuzzStrategies(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}]}]}}`,
		`{"metadata":{"name":"d","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"-1"}}}]}}}}`,
		`{"metadata":{"name":"s","namespace":"default"},"spec":{"type":"NodePort","clusterIPs":["None","::1"],"ports":[{"port":80,"targetPort":"http","nodePort":30000}]}}`,
		`{"metadata":{"name":"n"},"spec":{"podCIDRs":["10.0.0.0/24"],"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"4"}}}`,
		`{"metadata":{"name":"e","namespace":"default"},"involvedObject":{"kind":"Pod"},"series":{"count":2},"data":{"k":"dg=="},"stringData":{"a":"b"}}`,
		`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"x%","maxUnavailable":"%"}},"holderIdentity":"h","leaseDurationSeconds":-4}}`,
		`{"metadata":{"deletionTimestamp":"2025-01-01T00:00:00Z"},"status":{"phase":"Failed","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":1}}}]}}`,
		`{"spec":{"rules":[{"host":"*.a","http":{"paths":[{"pathType":"Prefix","backend":{"service":{"name":"s","port":{"name":"x","number":1}}}}]}}],"tls":[{"hosts":["b"]}],"parameters":{"kind":"K","scope":"Namespace"},"cidrs":["10.0.0.0/8","::/0","x"],"parentRef":{"resource":"r"}},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}}`,
		`{"spec":{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.1.0.0/16"]}}],"ports":[{"port":"http","endPort":3}]}],"egress":[{}]},"addressType":"IPv4","endpoints":[{"addresses":["::1"]}],"ports":[{}]}`,
		`{"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Queue","queuing":{"queues":1,"handSize":1}}},"exempt":{},"matchingPrecedence":1,"distinguisherMethod":{"type":"x"},"rules":[{"subjects":[{"kind":"User"}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["/a*"]}]}]}}`,
		`{"metadata":{"name":"system-x","namespace":"default"},"value":2000000001,"globalDefault":true,"preemptionPolicy":"","handler":"h","overhead":{"podFixed":{"cpu":"-1"}},"eventTime":"2025-01-01T00:00:00.000000Z","series":{"count":1},"regarding":{"kind":"Pod"},"note":"n"}`,
		`{}`, `null`, `[`,
	} {
		f.Add([]byte(seed))
	}
	codecs := scheme.New()
	resources := Resources()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, r := range resources {
			gvk := r.GVK()
			obj, _, err := codecs.JSON.Decode(data, &gvk, r.New())
			if err != nil {
				continue
			}
			exercise(t, r, obj)
		}
	})
}

func exercise(t *testing.T, r *registry.Resource, obj runtime.Object) {
	if r.Strategy == nil {
		if r.Table != nil {
			_, _ = r.Table.Cells(obj)
		}
		return // a virtual resource without write logic
	}
	old := obj.DeepCopyObject()
	r.Strategy.Default(obj)
	again := obj.DeepCopyObject()
	r.Strategy.Default(again)
	if !apiequality.Semantic.DeepEqual(obj, again) {
		t.Errorf("%s: Default is not idempotent", r.Resource)
	}
	r.Strategy.PrepareForCreate(obj)
	_ = r.Strategy.Validate(obj)
	_, _, _ = r.Attrs(obj)
	if r.Table != nil {
		_, _ = r.Table.Cells(obj)
	}
	if r.Scale != nil {
		_, _, _, _ = r.Scale.Replicas(obj)
	}
	for _, base := range []runtime.Object{old, r.New()} {
		upd := obj.DeepCopyObject()
		r.Strategy.PrepareForUpdate(upd, base)
		r.Strategy.Default(upd)
		_ = r.Strategy.ValidateUpdate(upd, base)
		if r.Status != nil {
			st := obj.DeepCopyObject()
			r.Status.PrepareForUpdate(st, base)
			_ = r.Status.ValidateUpdate(st, base)
		}
		for _, sr := range r.Subresources {
			if sr.Update != nil {
				st := obj.DeepCopyObject()
				sr.Update.PrepareForUpdate(st, base)
				_ = sr.Update.ValidateUpdate(st, base)
			}
		}
	}
}

// fuzzWords are the strings the structured fuzzer draws from: enum values,
// names, addresses and quantities the hooks branch on.
var fuzzWords = []string{
	"", "a", "web", "Web_1", "app", "kubernetes", "example.com/x", "None", "10.0.0.1", "::1", "10.0.0.0/24", "bad",
	"Always", "Never", "OnFailure", "IfNotPresent", "TCP", "UDP", "HTTP", "ClusterIP", "NodePort", "LoadBalancer",
	"ExternalName", "ClientIP", "Local", "Cluster", "SingleStack", "RequireDualStack", "IPv4", "IPv6", "RollingUpdate",
	"Recreate", "25%", "0%", "x%", "Running", "Pending", "Succeeded", "Failed", "Active", "Terminating", "Exists",
	"Equal", "NoSchedule", "NoExecute", "Ready", "True", "False", "Completed", "CrashLoopBackOff", "default",
	"kube-system", "nginx:latest", "nginx@sha256:ab", "kubernetes.io/tls", "kubernetes.io/dockerconfigjson",
	"node-role.kubernetes.io/control-plane", "cpu", "memory", "example.com/gpu",
}

var fuzzQuantities = []string{"0", "1", "-1", "100m", "1.5", "1Gi", "-2Gi", "1e3", "0.0001"}

// FuzzFilledObjects fills objects of every built-in kind from the fuzzer's
// bytes, field by field with words the hooks branch on, and runs every
// hook on them: none may panic, and Default must be idempotent.
func FuzzFilledObjects(f *testing.F) {
	for _, seed := range []string{"", "pods", "a much longer seed to steer the filler elsewhere", "\x00\x01\x02\x03"} {
		f.Add([]byte(seed))
	}
	resources := Resources()
	f.Fuzz(func(t *testing.T, data []byte) {
		filler := randfill.NewFromGoFuzz(data).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
			func(s *string, c randfill.Continue) { *s = fuzzWords[c.Intn(len(fuzzWords))] },
			func(q *resource.Quantity, c randfill.Continue) {
				*q = resource.MustParse(fuzzQuantities[c.Intn(len(fuzzQuantities))])
			},
			func(v *intstr.IntOrString, c randfill.Continue) {
				if c.Bool() {
					*v = intstr.FromInt32(int32(c.Intn(70000)) - 2)
				} else {
					*v = intstr.FromString(fuzzWords[c.Intn(len(fuzzWords))])
				}
			},
			func(r *runtime.RawExtension, c randfill.Continue) {
				r.Raw = []byte([]string{"", "null", "{}", `{"a":1}`, "[1]", "{"}[c.Intn(6)])
			},
			func(m *metav1.ObjectMeta, c randfill.Continue) {
				c.FillNoCustom(m)
				m.ManagedFields = nil
			},
			// Opaque parameters (resource.k8s.io): JSON, never a Go object.
			func(e *runtime.RawExtension, c randfill.Continue) {
				e.Raw = []byte([]string{``, `{"a":1}`, `[1]`, `null`, `{`}[c.Intn(5)])
			},
		)
		for _, r := range resources {
			obj := r.New()
			filler.Fill(obj)
			exercise(t, r, obj)
		}
	})
}
