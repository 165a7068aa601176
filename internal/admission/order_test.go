package admission

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// TestEnabled checks the flags' semantics and wording, as kube-apiserver's.
func TestEnabled(t *testing.T) {
	def, err := Enabled(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(def) != len(DefaultOn()) {
		t.Errorf("default %v, want the %d default plugins", def, len(DefaultOn()))
	}
	for i := 1; i < len(def); i++ {
		if slices.Index(Order(), def[i-1]) > slices.Index(Order(), def[i]) {
			t.Errorf("default plugins out of order: %v", def)
		}
	}
	if def[0] != "NamespaceLifecycle" || def[len(def)-1] != "ResourceQuota" {
		t.Errorf("default chain %v, want NamespaceLifecycle first and ResourceQuota last", def)
	}
	got, err := Enabled([]string{"NodeRestriction", "AlwaysPullImages"}, []string{"ServiceAccount", "ResourceQuota"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "NodeRestriction") || !slices.Contains(got, "AlwaysPullImages") || slices.Contains(got, "ServiceAccount") || slices.Contains(got, "ResourceQuota") {
		t.Errorf("enabled %v", got)
	}
	if i, j := slices.Index(got, "LimitRanger"), slices.Index(got, "NodeRestriction"); i > j {
		t.Errorf("NodeRestriction before LimitRanger: %v", got)
	}
	for _, tc := range []struct {
		enable, disable []string
		want            string
	}{
		{[]string{"Bogus"}, nil, `enable-admission-plugins plugin "Bogus" is unknown`},
		{nil, []string{"Bogus"}, `disable-admission-plugins plugin "Bogus" is unknown`},
		{[]string{"Priority", "LimitRanger"}, []string{"LimitRanger", "Priority"}, `[LimitRanger Priority] in enable-admission-plugins and disable-admission-plugins overlapped`},
		{[]string{"X"}, []string{"Y"}, `[enable-admission-plugins plugin "X" is unknown, disable-admission-plugins plugin "Y" is unknown]`},
	} {
		if _, err := Enabled(tc.enable, tc.disable); err == nil || err.Error() != tc.want {
			t.Errorf("Enabled(%v, %v) = %v, want %q", tc.enable, tc.disable, err, tc.want)
		}
	}
}

// recorder is a plugin recording what ran.
type recorder struct {
	name     string
	log      *[]string
	mutate   bool
	validate bool
	refuse   bool
}

func (r recorder) Name() string { return r.name }

func (r recorder) run(phase string) (*registry.Txn, error) {
	*r.log = append(*r.log, phase+" "+r.name)
	if r.refuse {
		return nil, errors.New("refused by " + r.name)
	}
	return &registry.Txn{
		Commit: func() { *r.log = append(*r.log, "commit "+r.name) },
		Revert: func() { *r.log = append(*r.log, "revert "+r.name) },
	}, nil
}

type mutator struct{ recorder }

func (m mutator) Admit(context.Context, registry.Env, *registry.Attributes) (*registry.Txn, error) {
	return m.run("admit")
}

type both struct{ mutator }

func (b both) Validate(context.Context, registry.Env, *registry.Attributes) (*registry.Txn, error) {
	return b.run("validate")
}

// TestChain checks the phases run their plugins in order, the first
// refusal stops a phase and reverts what the plugins before it took, and
// the joined Txn commits every plugin's.
func TestChain(t *testing.T) {
	var log []string
	c, err := NewChain(mutator{recorder{name: "a", log: &log}}, both{mutator{recorder{name: "b", log: &log}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Names(), []string{"a", "b"}) {
		t.Errorf("names %v", c.Names())
	}
	txn, err := c.Admit(context.Background(), nil, &registry.Attributes{})
	if err != nil {
		t.Fatal(err)
	}
	txn.Finish(true)
	vtxn, err := c.Validate(context.Background(), nil, &registry.Attributes{})
	if err != nil {
		t.Fatal(err)
	}
	vtxn.Finish(false)
	want := []string{"admit a", "admit b", "commit a", "commit b", "validate b", "revert b"}
	if !slices.Equal(log, want) {
		t.Errorf("log %v, want %v", log, want)
	}
	log = nil
	c, _ = NewChain(mutator{recorder{name: "a", log: &log}}, mutator{recorder{name: "no", log: &log, refuse: true}}, mutator{recorder{name: "c", log: &log}})
	if _, err := c.Admit(context.Background(), nil, &registry.Attributes{}); err == nil || err.Error() != "refused by no" {
		t.Errorf("err %v", err)
	}
	if want := []string{"admit a", "admit no", "revert a"}; !slices.Equal(log, want) {
		t.Errorf("log %v, want %v", log, want)
	}
	if _, err := NewChain(recorder{name: "idle", log: &log}); err == nil {
		t.Error("a plugin that neither admits nor validates was accepted")
	}
	if _, err := NewChain(mutator{recorder{name: "a", log: &log}}, mutator{recorder{name: "a", log: &log}}); err == nil {
		t.Error("a plugin given twice was accepted")
	}
}
