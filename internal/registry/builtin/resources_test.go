package builtin

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDiscovery pins what discovery advertises of every served resource
// to `kubectl api-resources -o wide` of kube-apiserver v1.37.2
// (testdata/api-resources-v1.37.txt): name, short names, group-version,
// scope, kind, verbs and categories; and the kind's singular name and list
// kind to Kubernetes' conventions.
func TestDiscovery(t *testing.T) {
	want := referenceResources(t)
	for _, r := range Resources() {
		gv := r.GroupVersion().String()
		row, ok := want[gv+" "+r.Resource]
		if v := r.View; !ok && v != nil && v.Group == r.Group && v.Resource == r.Resource {
			// The list names preferred versions only: a view of another
			// version's storage (autoscaling/v1) is compared with the row
			// of the version it views.
			row, ok = want[v.Group+"/"+v.Version+" "+r.Resource]
		}
		if !ok {
			t.Errorf("%s %s: not served by kube-apiserver v1.37", gv, r.Resource)
			continue
		}
		verbs := slices.Clone(r.Verbs())
		slices.Sort(verbs)
		got := apiResourceRow{
			shortNames: strings.Join(r.ShortNames, ","), namespaced: r.Namespaced, kind: r.Kind,
			verbs: strings.Join(verbs, ","), categories: strings.Join(r.Categories, ","),
		}
		if got != row {
			t.Errorf("%s %s:\n got %+v\nwant %+v", gv, r.Resource, got, row)
		}
		if r.Singular != strings.ToLower(r.Kind) || (r.Virtual == nil && r.ListKind != r.Kind+"List") {
			t.Errorf("%s %s: singular %q, listKind %q", gv, r.Resource, r.Singular, r.ListKind)
		}
		// The reviews render no Table (kube's review storages are no
		// TableConvertors: a Table request gets 406).
		if (r.Table == nil && r.Virtual == nil) || r.Attrs == nil {
			t.Errorf("%s %s: missing table or attrs", gv, r.Resource)
		}
		if r.Virtual == nil && r.Strategy == nil {
			t.Errorf("%s %s: a stored resource without a strategy", gv, r.Resource)
		}
	}
}

// apiResourceRow is one line of `kubectl api-resources -o wide`.
type apiResourceRow struct {
	shortNames string
	namespaced bool
	kind       string
	verbs      string
	categories string
}

// referenceResources reads testdata/api-resources-v1.37.txt, keyed by
// "apiVersion resource".
func referenceResources(t *testing.T) map[string]apiResourceRow {
	t.Helper()
	b, err := os.ReadFile("testdata/api-resources-v1.37.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := lines[0]
	col := func(name string) int { return strings.Index(header, name) }
	cols := []int{col("NAME"), col("SHORTNAMES"), col("APIVERSION"), col("NAMESPACED"), col("KIND"), col("VERBS"), col("CATEGORIES")}
	cell := func(line string, i int) string {
		end := len(line)
		if i+1 < len(cols) {
			end = min(cols[i+1], len(line))
		}
		if cols[i] >= len(line) {
			return ""
		}
		return strings.TrimSpace(line[cols[i]:end])
	}
	out := map[string]apiResourceRow{}
	for _, line := range lines[1:] {
		out[cell(line, 2)+" "+cell(line, 0)] = apiResourceRow{
			shortNames: cell(line, 1), namespaced: cell(line, 3) == "true", kind: cell(line, 4),
			verbs: cell(line, 5), categories: cell(line, 6),
		}
	}
	if len(out) != 71 {
		t.Fatalf("read %d resources from the reference list, want 71", len(out))
	}
	return out
}

// TestNewTypes checks New and NewList return distinct objects of matching
// kinds, and that the table's name column has format "name" (but where
// kube-apiserver's has none).
func TestNewTypes(t *testing.T) {
	for _, r := range Resources() {
		a, b := r.New(), r.New()
		if a == b {
			t.Errorf("%s: New returns a shared object", r.Resource)
		}
		switch {
		case r.NewList == nil && r.Virtual != nil && r.Virtual.List == nil:
			// a virtual resource without list (the reviews) has no list type
		case r.NewList == nil:
			t.Errorf("%s: no NewList", r.Resource)
		default:
			if got, want := fmt.Sprintf("%T", r.NewList()), fmt.Sprintf("%TList", a); got != want {
				t.Errorf("%s: NewList is %s, want %s", r.Resource, got, want)
			}
		}
		if r.Table == nil {
			continue // a review: see TestDiscovery
		}
		cols := r.Table.Columns()
		format := "name"
		if r.Resource == "storageversionmigrations" {
			format = "" // as kube-apiserver v1.37 prints them
		}
		if !slices.ContainsFunc(cols, func(c metav1.TableColumnDefinition) bool { return c.Name == "Name" && c.Format == format }) {
			t.Errorf("%s: no Name column with format name", r.Resource)
		}
		cells, err := r.Table.Cells(a)
		// IPAddress rows carry one cell more than kube-apiserver defines
		// columns for (the age), as kube-apiserver's do.
		extra := 0
		if r.Kind == "IPAddress" {
			extra = 1
		}
		if err != nil || len(cells) != len(cols)+extra {
			t.Errorf("%s: %d cells for %d columns (err %v)", r.Resource, len(cells), len(cols), err)
		}
	}
}

// TestWrongType checks hooks reject, rather than panic on, objects of
// another kind.
func TestWrongType(t *testing.T) {
	rs := Resources()
	for i, r := range rs {
		other := rs[(i+1)%len(rs)].New()
		if r.Strategy == nil {
			continue // a virtual resource that takes any body
		}
		r.Strategy.Default(other)
		r.Strategy.PrepareForCreate(other)
		r.Strategy.PrepareForUpdate(other, other)
		if errs := r.Strategy.Validate(other); len(errs) != 1 {
			t.Errorf("%s: Validate(%T) = %v", r.Resource, other, errs)
		}
		if errs := r.Strategy.ValidateUpdate(other, r.New()); len(errs) != 1 {
			t.Errorf("%s: ValidateUpdate(%T) = %v", r.Resource, other, errs)
		}
		if _, _, err := r.Attrs(other); err == nil {
			t.Errorf("%s: Attrs(%T) did not fail", r.Resource, other)
		}
		if _, err := r.Table.Cells(other); err == nil {
			t.Errorf("%s: Cells(%T) did not fail", r.Resource, other)
		}
		if r.Scale != nil {
			if _, _, _, err := r.Scale.Replicas(other); err == nil {
				t.Errorf("%s: Scale.Replicas(%T) did not fail", r.Resource, other)
			}
		}
	}
}

// TestTriggerFields: every trigger field a kind names for the watch cache's
// index is one of its selectable fields (the server refuses to start
// otherwise), and pods index their watchers by spec.nodeName, as
// kube-apiserver's pod registry does, so each node's watch is offered only
// its own pods' events.
func TestTriggerFields(t *testing.T) {
	var podTriggers []string
	for _, r := range Resources() {
		if r.Attrs == nil {
			continue
		}
		_, set, err := r.Attrs(r.New())
		if err != nil {
			t.Fatalf("%s: Attrs: %v", r.Resource, err)
		}
		for _, f := range r.TriggerFields {
			if _, ok := set[f]; !ok {
				t.Errorf("%s: trigger field %q is not selectable", r.Resource, f)
			}
		}
		if r.Group == "" && r.Resource == "pods" {
			podTriggers = r.TriggerFields
		}
	}
	if !slices.Equal(podTriggers, []string{"spec.nodeName"}) {
		t.Errorf("pods' trigger fields are %v, want [spec.nodeName]", podTriggers)
	}
}
