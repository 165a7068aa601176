package compat

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// pagingNamespace holds the objects of the paged lists of TestProtocolPaging.
const pagingNamespace = "c-protocol-paging"

// TestProtocolPaging compares paged lists whose later pages are read at a
// revision that is no longer current (objects created and deleted after
// the first page): the items, and remainingItemCount, which kube-apiserver
// gives on every unfiltered page with a continue token, however it reads
// the page, and omits with a selector. Each side continues with its own
// tokens; the answers are compared as the protocol category's.
func TestProtocolPaging(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "protocol", env.sink)
	defer rep.Finish()
	ensureNamespace(t, pagingNamespace)
	cm := "/api/v1/namespaces/" + pagingNamespace + "/configmaps"
	create := func(name string) {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
		both(t, difftest.Request{Method: "POST", Path: cm, Body: []byte(body)})
	}
	for _, name := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		create(name)
	}
	const filter = "&fieldSelector=metadata.name%21%3Dp2"
	first := pageBoth(t, rep, "paging/first page", cm+"?limit=2", nil)
	filtered := pageBoth(t, rep, "paging/first filtered page", cm+"?limit=2"+filter, nil)
	// Changes after the pages' revision, before and after their end.
	create("p0")
	both(t, difftest.Request{Method: "DELETE", Path: cm + "/p4"})
	create("p7")
	next := pageBoth(t, rep, "paging/continued page at an old revision", cm+"?limit=2", first)
	next = pageBoth(t, rep, "paging/next page at an old revision", cm+"?limit=1", next)
	pageBoth(t, rep, "paging/last page at an old revision", cm+"?limit=1", next)
	pageBoth(t, rep, "paging/continued filtered page at an old revision", cm+"?limit=2"+filter, filtered)
	pageBoth(t, rep, "paging/current list", cm+"?limit=3", nil)
	// Refusals: a token with a resourceVersion other than "0" (the token
	// names the revision), and a token that does not decode.
	pageBoth(t, rep, "paging/continue with a resourceVersion", cm+"?limit=2&resourceVersion=1", first)
	pageBoth(t, rep, "paging/continue with resourceVersion 0", cm+"?limit=2&resourceVersion=0", first)
	garbage := map[string]string{env.ref.Name: "garbage", env.sp.Name: "garbage"}
	pageBoth(t, rep, "paging/continue token that does not decode", cm+"?limit=2&resourceVersion=1", garbage)
}

// pageBoth lists path on each side, continuing with that side's token of
// tokens (by side name; nil for a first page), records the differences of
// the answers under caseID, and returns each side's next token.
func pageBoth(t *testing.T, rep *difftest.Report, caseID, path string, tokens map[string]string) map[string]string {
	t.Helper()
	next := map[string]string{}
	answers := map[string]map[string]any{}
	for _, side := range []*difftest.Side{env.ref, env.sp} {
		p := path
		if tok := tokens[side.Name]; tok != "" {
			p += "&continue=" + url.QueryEscape(tok)
		}
		r, err := side.Do(t.Context(), difftest.Request{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		if tok, ok := difftest.Get(r.JSON(), "metadata.continue").(string); ok {
			next[side.Name] = tok
		}
		answers[side.Name] = answer(r, difftest.Normalization{})
	}
	rep.Compare(caseID, answers[env.ref.Name], answers[env.sp.Name])
	return next
}
