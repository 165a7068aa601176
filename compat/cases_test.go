package compat

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// TestCases runs, for every resource setpoint serves, the generic cases
// (testdata/cases/_generic.yaml) and the resource's own
// (testdata/cases/<group>_<resource>.yaml) against both servers and
// compares the answers: status code, media type, warnings and the body
// (a Status with reason, message and details, or the object with its
// defaults), after normalization.
func TestCases(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "cases", env.sink)
	defer rep.Finish()
	generic, err := readCaseFile("testdata/cases/_generic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := readCaseFiles()
	if err != nil {
		t.Fatal(err)
	}
	for id := range files {
		if !known(id) {
			t.Errorf("testdata/cases/%s: the reference serves no %s", caseFileName(id), id)
		}
	}
	samples, err := loadSamples()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refResources("") {
		if r.has("create") || files[r.ID()] != nil {
			ids = append(ids, r.ID())
		}
	}
	sort.Strings(ids)
	t.Run("resources", func(t *testing.T) {
		for _, id := range ids {
			r := env.refRes[id]
			t.Run(id, func(t *testing.T) {
				t.Parallel()
				if !served(id) {
					// TestServed reports it; the resource's own cases still
					// run against the reference, to check their wants
					// (COMPAT_CHECK_GENERIC=1: the generic ones too).
					if files[id] != nil || os.Getenv("COMPAT_CHECK_GENERIC") != "" {
						runResource(t, rep, r, files[id], generic, samples, true)
					}
					return
				}
				runResource(t, rep, r, files[id], generic, samples, false)
			})
		}
	})
}

// resourceRun is the state of one resource's cases.
type resourceRun struct {
	t      *testing.T
	rep    *difftest.Report
	r      apiResource
	file   *caseFile
	ns     string
	sample map[string]any
	norm   difftest.Normalization
	// placeholders replaces the placeholders of the current case.
	placeholders *strings.Replacer
	// refOnly runs the cases against the reference alone (a resource
	// setpoint does not serve): their wants are checked, nothing compared.
	refOnly bool
}

// runResource runs a resource's cases: the generic ones and the file's;
// refOnly runs them against the reference alone, checking their wants
// (only the file's unless COMPAT_CHECK_GENERIC is set).
func runResource(t *testing.T, rep *difftest.Report, r apiResource, file *caseFile, generic *caseFile, samples []map[string]any, refOnly bool) {
	if file == nil {
		file = &caseFile{Resource: r.ID()}
	}
	if refOnly && os.Getenv("COMPAT_CHECK_GENERIC") == "" {
		generic = nil
	}
	run := &resourceRun{t: t, rep: rep, r: r, file: file, sample: file.Sample, norm: normFor(r.ID()), refOnly: refOnly}
	if run.sample == nil {
		run.sample = sampleFor(samples, r)
	}
	run.norm.Masks = append(run.norm.Masks, file.Masks...)
	if r.Namespaced {
		run.ns = namespaceFor(r.ID())
		ensureNamespace(t, run.ns)
	}
	for _, obj := range file.Setup {
		run.setup(obj)
	}
	var cases []caseSpec
	if run.sample != nil && generic != nil {
		for _, c := range generic.Cases {
			if run.applies(c) {
				cases = append(cases, c)
			}
		}
	}
	cases = append(cases, file.Cases...)
	for i, c := range cases {
		run.runCase(i+1, c)
	}
}

// setup creates an object the cases need on both sides.
func (run *resourceRun) setup(obj map[string]any) {
	r, ok := resourceOf(obj)
	if !ok {
		run.t.Fatalf("setup object %v: no such kind", obj["kind"])
	}
	obj = difftest.Clone(obj).(map[string]any)
	if r.Namespaced {
		obj["metadata"].(map[string]any)["namespace"] = run.ns
	}
	run.both(difftest.Request{Method: "POST", Path: r.Path(run.ns), Body: marshal(obj)})
}

// both sends a request to both sides (to the reference alone in refOnly
// mode, whose answer then stands for both).
func (run *resourceRun) both(req difftest.Request) difftest.Pair {
	if !run.refOnly {
		return both(run.t, req)
	}
	resp, err := env.ref.Do(context.Background(), req)
	if err != nil {
		run.t.Fatal(err)
	}
	return difftest.Pair{Ref: resp, SP: resp}
}

// applies reports whether a generic case applies to the resource: its
// scope, the verbs its op needs, and the file's exclusions.
func (run *resourceRun) applies(c caseSpec) bool {
	switch {
	case c.Scope == "namespaced" && !run.r.Namespaced, c.Scope == "cluster" && run.r.Namespaced:
		return false
	}
	for _, skip := range run.file.SkipGeneric {
		if difftest.Glob(skip, c.Name) {
			return false
		}
	}
	for _, verb := range opVerbs(c.Op) {
		if !run.r.has(verb) {
			return false
		}
	}
	return true
}

// opVerbs are the verbs an op uses.
func opVerbs(op string) []string {
	switch op {
	case "get", "get-missing":
		return []string{"create", "get"}
	case "update", "update-stale", "update-missing", "status":
		return []string{"create", "get", "update"}
	case "patch", "patch-missing":
		return []string{"create", "patch"}
	case "delete", "delete-missing":
		return []string{"create", "delete"}
	}
	return []string{"create"}
}

// objectName is the name of a case's object.
func (run *resourceRun) objectName(n int, c caseSpec) string {
	run.placeholders = strings.NewReplacer("{case}", c.Name, "{Case}", camel(c.Name), "{n}", strconv.Itoa(n))
	format := run.file.NameFormat
	if format == "" {
		format = "{case}"
	}
	return run.placeholders.Replace(format)
}

// camel turns "update-stale" into "UpdateStale".
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// object builds a case's object: the sample in the resource's namespace,
// named, with patch merged in.
func (run *resourceRun) object(name string, patch any) map[string]any {
	obj := difftest.Clone(run.sample).(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["name"] = name
	if run.file.NameFormat == "none" {
		delete(meta, "name")
	}
	delete(meta, "namespace")
	if run.r.Namespaced {
		meta["namespace"] = run.ns
	}
	if patch != nil {
		obj = mergePatch(obj, patch).(map[string]any)
	}
	return run.substitute(obj, name).(map[string]any)
}

// substitute replaces, in every string of v, the placeholders of a case
// ({case}, {Case}, {n}: see _generic.yaml) and the samples' namespace.
func (run *resourceRun) substitute(v any, name string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = run.substitute(val, name)
		}
	case []any:
		for i, val := range x {
			x[i] = run.substitute(val, name)
		}
	case string:
		if x == samplesNamespace {
			return run.ns
		}
		return run.placeholders.Replace(x)
	}
	return v
}

func (run *resourceRun) itemPath(name, sub string) string {
	p := run.r.Path(run.ns) + "/" + url.PathEscape(name)
	if sub != "" {
		p += "/" + sub
	}
	return p
}

func withQuery(path, q string) string {
	if q == "" {
		return path
	}
	return path + "?" + q
}

// runCase runs one case on both sides and records the differences of the
// final answers.
func (run *resourceRun) runCase(n int, c caseSpec) {
	t := run.t
	id := run.r.ID() + "/" + c.Name
	name := run.objectName(n, c)
	var final difftest.Pair
	switch c.Op {
	case "", "create", "create-twice", "duplicate-field":
		req := run.createRequest(name, c)
		if c.Op == "create-twice" {
			run.both(req)
		}
		final = run.both(req)
	case "get-missing", "update-missing", "patch-missing", "delete-missing":
		final = run.both(run.missingRequest(name, c))
	default:
		base := run.object(name, c.Base)
		setup := run.both(difftest.Request{Method: "POST", Path: run.r.Path(run.ns), Body: marshal(base)})
		if setup.Ref.Code != 201 || setup.SP.Code != 201 {
			run.rep.Compare(id+"/setup", answer(setup.Ref, run.norm), answer(setup.SP, run.norm))
			if setup.Ref.Code != 201 {
				t.Errorf("case %s: the reference refused its base object: %d %.300s", id, setup.Ref.Code, oneLine(setup.Ref.Body))
			}
			return
		}
		final = run.perSide(func(s *difftest.Side) (*difftest.Response, error) {
			if err := run.settle(s, name); err != nil {
				return nil, err
			}
			return run.onExisting(s, name, base, c)
		})
	}
	if final.Ref == nil || final.SP == nil {
		return
	}
	if !wantMatches(c.Want, final.Ref.Code) {
		t.Errorf("case %s: the reference answered %d (%.300s); the case says %s: fix the case", id, final.Ref.Code, oneLine(final.Ref.Body), c.Want)
	}
	if run.refOnly {
		return
	}
	run.rep.Compare(id, answer(final.Ref, run.norm), answer(final.SP, run.norm))
}

// oneLine is a body as one line, for messages.
func oneLine(b []byte) string {
	return strings.Join(strings.Fields(string(b)), " ")
}

// settle waits, when the file names a condition, until the object's
// status has it True on one side: the server's own controllers (the CRD
// controller) have then finished with the new object.
func (run *resourceRun) settle(s *difftest.Side, name string) error {
	cond := run.file.SettleCondition
	if cond == "" {
		return nil
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := s.Do(context.Background(), difftest.Request{Path: run.itemPath(name, "")})
		if err != nil {
			return err
		}
		conds, _ := difftest.Get(resp.JSON(), "status.conditions").([]any)
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == cond && m["status"] == "True" {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s %s never got condition %s", s.Name, run.r.ID(), name, cond)
}

// createRequest is the POST of a create case.
func (run *resourceRun) createRequest(name string, c caseSpec) difftest.Request {
	obj := run.object(name, c.Patch)
	body := marshal(obj)
	switch {
	case c.Body != nil:
		body = []byte(*c.Body)
	case c.Op == "duplicate-field":
		body = append([]byte(fmt.Sprintf(`{"apiVersion":%q,`, run.r.GroupVersion())), body[1:]...)
	case c.ContentType == "application/yaml":
		y, err := yaml.JSONToYAML(body)
		if err != nil {
			run.t.Fatal(err)
		}
		body = y
	}
	req := difftest.Request{Method: "POST", Path: withQuery(run.r.Path(run.ns), c.Query), Body: body}
	if c.ContentType != "" {
		req.Header = map[string]string{"Content-Type": c.ContentType}
	}
	return req
}

// missingRequest is a request on an object that does not exist.
func (run *resourceRun) missingRequest(name string, c caseSpec) difftest.Request {
	path := withQuery(run.itemPath(name, c.Subresource), c.Query)
	switch c.Op {
	case "update-missing":
		return difftest.Request{Method: "PUT", Path: path, Body: marshal(run.object(name, c.Patch))}
	case "patch-missing":
		body, ctype := run.patchBody(name, c)
		return difftest.Request{Method: "PATCH", Path: path, Body: body, Header: map[string]string{"Content-Type": ctype}}
	case "delete-missing":
		return difftest.Request{Method: "DELETE", Path: path}
	}
	return difftest.Request{Path: path}
}

// perSide runs fn for both sides at once.
func (run *resourceRun) perSide(fn func(*difftest.Side) (*difftest.Response, error)) difftest.Pair {
	if run.refOnly {
		resp, err := fn(env.ref)
		if err != nil {
			run.t.Fatal(err)
		}
		return difftest.Pair{Ref: resp, SP: resp}
	}
	var p difftest.Pair
	var refErr, spErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.SP, spErr = fn(env.sp)
	}()
	p.Ref, refErr = fn(env.ref)
	wg.Wait()
	for _, err := range []error{refErr, spErr} {
		if err != nil {
			run.t.Fatal(err)
		}
	}
	return p
}

// onExisting runs the request of a case on an object created for it, on
// one side.
func (run *resourceRun) onExisting(s *difftest.Side, name string, base map[string]any, c caseSpec) (*difftest.Response, error) {
	ctx := context.Background()
	item := run.itemPath(name, "")
	do := func(r difftest.Request) (*difftest.Response, error) { return s.Do(ctx, r) }
	switch c.Op {
	case "get":
		return do(difftest.Request{Path: withQuery(run.itemPath(name, c.Subresource), c.Query)})
	case "delete":
		req := difftest.Request{Method: "DELETE", Path: withQuery(item, c.Query)}
		if c.Body != nil {
			req.Body = []byte(*c.Body)
		}
		return do(req)
	case "patch":
		body, ctype := run.patchBody(name, c)
		if c.Body != nil {
			body = []byte(*c.Body)
		}
		return do(difftest.Request{Method: "PATCH", Path: withQuery(run.itemPath(name, c.Subresource), c.Query),
			Body: body, Header: map[string]string{"Content-Type": ctype}})
	}
	// update, update-stale, status: read, change, write back.
	live, err := do(difftest.Request{Path: item})
	if err != nil {
		return nil, err
	}
	obj, _ := live.JSON().(map[string]any)
	if live.Code != 200 || obj == nil {
		return live, nil
	}
	sub := c.Subresource
	if c.Op == "status" && sub == "" {
		sub = "status"
	}
	put := func(o any, q string) (*difftest.Response, error) {
		return do(difftest.Request{Method: "PUT", Path: withQuery(run.itemPath(name, sub), q), Body: marshal(o)})
	}
	if c.Op == "update-stale" {
		if _, err := put(mergePatch(obj, map[string]any{"metadata": map[string]any{"labels": map[string]any{"bump": "1"}}}), ""); err != nil {
			return nil, err
		}
		return put(mergePatch(obj, map[string]any{"metadata": map[string]any{"labels": map[string]any{"bump": "2"}}}), c.Query)
	}
	if c.Body != nil {
		return do(difftest.Request{Method: "PUT", Path: withQuery(run.itemPath(name, sub), c.Query), Body: []byte(*c.Body)})
	}
	resp, err := put(mergePatch(obj, c.Patch), c.Query)
	// A server's own controllers (the CRD controller) may write the object
	// between the read and the write: read again and retry.
	for try := 0; try < 5 && err == nil && isModifiedConflict(resp); try++ {
		if live, err = do(difftest.Request{Path: item}); err != nil {
			return nil, err
		}
		obj, _ = live.JSON().(map[string]any)
		resp, err = put(mergePatch(obj, c.Patch), c.Query)
	}
	return resp, err
}

// isModifiedConflict reports a 409 for a stale resourceVersion.
func isModifiedConflict(r *difftest.Response) bool {
	return r.Code == 409 && strings.Contains(string(r.Body), "the object has been modified")
}

// patchBody is the body and media type of a patch case.
func (run *resourceRun) patchBody(name string, c caseSpec) ([]byte, string) {
	ctype := map[string]string{
		"": "application/merge-patch+json", "merge": "application/merge-patch+json",
		"strategic": "application/strategic-merge-patch+json", "json": "application/json-patch+json",
		"apply": "application/apply-patch+yaml",
	}[c.PatchType]
	if c.ContentType != "" {
		ctype = c.ContentType
	}
	if c.Body != nil {
		return []byte(*c.Body), ctype
	}
	if c.PatchType == "apply" {
		cfg := run.object(name, c.Patch)
		return marshal(cfg), ctype
	}
	return marshal(c.Patch), ctype
}
