package flowcontrol

import (
	"encoding/json"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/strategy"
)

// TestBootstrapObjectsValid: the configuration kube-apiserver creates
// passes validation, and defaulting leaves it as it is (it was recorded
// defaulted).
func TestBootstrapObjectsValid(t *testing.T) {
	fs, pl := lookup(t, "flowschemas"), lookup(t, "prioritylevelconfigurations")
	schemas, levels := fs.Bootstrap(), pl.Bootstrap()
	if len(schemas) != 11 || len(levels) != 8 {
		t.Fatalf("%d schemas, %d levels; want 11 and 8", len(schemas), len(levels))
	}
	for _, o := range schemas {
		obj := o.(*flowcontrolv1.FlowSchema)
		before := obj.DeepCopy()
		expectValid(t, create(fs, obj))
		if !apiequality.Semantic.DeepEqual(before.Spec, obj.Spec) {
			t.Errorf("%s: defaulting changed the spec", obj.Name)
		}
		if before.Status.Conditions[0].Type != flowcontrolv1.FlowSchemaConditionDangling {
			t.Errorf("%s: status %v", obj.Name, before.Status)
		}
	}
	for _, o := range levels {
		obj := o.(*flowcontrolv1.PriorityLevelConfiguration)
		before := obj.DeepCopy()
		expectValid(t, create(pl, obj))
		if !apiequality.Semantic.DeepEqual(before.Spec, obj.Spec) {
			t.Errorf("%s: defaulting changed the spec", obj.Name)
		}
	}
}

func TestPriorityLevelDefaults(t *testing.T) {
	r := lookup(t, "prioritylevelconfigurations")
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue", Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
	expectValid(t, create(r, pl))
	l := pl.Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.LimitResponse.Queuing.Queues != 64 ||
		l.LimitResponse.Queuing.HandSize != 8 || l.LimitResponse.Queuing.QueueLengthLimit != 50 {
		t.Errorf("defaults = %+v %+v", l, l.LimitResponse.Queuing)
	}
}

func TestRequiredEntropyBits(t *testing.T) {
	for _, c := range []struct{ deck, hand, want int }{{128, 6, 42}, {128, 60, 420}, {64, 8, 48}, {1, 1, 0}} {
		if got := requiredEntropyBits(c.deck, c.hand); got != c.want {
			t.Errorf("requiredEntropyBits(%d, %d) = %d, want %d", c.deck, c.hand, got, c.want)
		}
	}
}

func TestGoNamed(t *testing.T) {
	b, err := json.Marshal(strategy.GoNamed{V: internalSpec(flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited",
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: new(int32(6)),
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Reject"}, LendablePercent: new(int32(0))}})})
	want := `{"Type":"Limited","Limited":{"NominalConcurrencyShares":6,"LimitResponse":{"Type":"Reject","Queuing":null},"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}`
	if err != nil || string(b) != want {
		t.Errorf("GoNamed = %s (%v), want %s", b, err, want)
	}
}

// TestUnknownUnionTypes: an unknown type selects no union member, so the
// member set is forbidden after the type's error, as kube-apiserver's
// declarative union check reports it.
func TestUnknownUnionTypes(t *testing.T) {
	r := lookup(t, "prioritylevelconfigurations")
	newLevel := func(typ flowcontrolv1.PriorityLevelEnablement, response flowcontrolv1.LimitResponseType) *flowcontrolv1.PriorityLevelConfiguration {
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: typ, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				LimitResponse: flowcontrolv1.LimitResponse{Type: response, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}
	}
	expectErrors(t, create(r, newLevel("Unlimited", "Queue")), "spec.type:FieldValueNotSupported", "spec.limited:FieldValueForbidden")
	expectErrors(t, create(r, newLevel("Limited", "Drop")), "spec.limited.limitResponse.type:FieldValueNotSupported", "spec.limited.limitResponse.queuing:FieldValueForbidden")
}
