package compat

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

const (
	docsFile   = "../docs/COMPATIBILITY.md"
	docsBegin  = "<!-- BEGIN compat allowlist (generated from compat/testdata/allowlist.yaml by TestAllowlistDocumented; COMPAT_UPDATE_DOCS=1 rewrites it) -->"
	docsEnd    = "<!-- END compat allowlist -->"
	updateDocs = "COMPAT_UPDATE_DOCS"
)

// TestAllowlistDocumented checks that docs/COMPATIBILITY.md lists the
// allowlist as it is (COMPAT_UPDATE_DOCS=1 rewrites the section).
func TestAllowlistDocumented(t *testing.T) {
	b, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", docsFile, docsBegin, docsEnd)
	}
	want := docsBegin + "\n" + renderAllowlist(env.allow) + docsEnd
	if doc[i:j+len(docsEnd)] == want {
		return
	}
	if os.Getenv(updateDocs) != "" {
		if err := os.WriteFile(docsFile, []byte(doc[:i]+want+doc[j+len(docsEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s does not list the allowlist as it is: run `%s=1 go test -run TestAllowlistDocumented .` in the compat directory", docsFile, updateDocs)
}

// renderAllowlist is the Markdown of the allowlist: resources not served
// yet by owner, then the differences by owner.
func renderAllowlist(a *difftest.Allowlist) string {
	var b strings.Builder
	byOwner := map[string][]string{}
	for _, ns := range a.NotServed {
		byOwner[ns.Owner] = append(byOwner[ns.Owner], "`"+ns.Resource+"`")
	}
	if len(a.NotServed) > 0 {
		fmt.Fprintf(&b, "\n#### Resources not served yet (%d)\n\n", len(a.NotServed))
		b.WriteString("Each is one difference of the `served` category; the cases of the resource run (and are compared) once it is served.\n\n")
		b.WriteString("| owner | resources |\n|---|---|\n")
		for _, o := range sortedKeys(byOwner) {
			fmt.Fprintf(&b, "| %s | %s |\n", o, strings.Join(byOwner[o], ", "))
		}
	}
	fmt.Fprintf(&b, "\n#### Differences (%d)\n\n", len(a.Differences))
	b.WriteString("`case` and `path` are globs over the suite's case ids and the paths of the answers' values (`*` any text, `{a,b}` either).\n\n")
	b.WriteString("| owner | category | case | path | what differs | why |\n|---|---|---|---|---|---|\n")
	entries := append([]difftest.Entry(nil), a.Differences...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Owner < entries[j].Owner })
	for _, e := range entries {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(e.Owner), cell(e.Category), code(e.CaseText()), code(e.Path), cell(e.What), cell(e.Why))
	}
	b.WriteString("\n")
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}
