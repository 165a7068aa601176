package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/testenv"
)

// TestKubectlGetTables: kubectl get and get -o wide of a sample of every
// API group (testdata/kubectl/tables/samples.yaml) print the columns and
// cells kube-apiserver v1.37.2 prints for the same objects (the other
// files there), times aside.
func TestKubectlGetTables(t *testing.T) {
	env := startSetpoint(t, testenv.Options{})
	dir := filepath.Join("testdata", "kubectl", "tables")
	kubectl(t, env, "", "create", "-f", filepath.Join(dir, "samples.yaml"))
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) < 30 {
		t.Fatalf("golden tables: %d (%v)", len(files), err)
	}
	for _, f := range files {
		resource, wide := strings.CutSuffix(strings.TrimSuffix(filepath.Base(f), ".txt"), "-wide")
		name := resource
		args := []string{"get", resource, "-n", "kr-tables", "-l", "kr=tables"}
		if wide {
			name += " -o wide"
			args = append(args, "-o", "wide")
		}
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := kubectl(t, env, "", args...)
			wh, wr := tableCells(string(want))
			gh, gr := tableCells(got)
			if !slices.Equal(gh, wh) {
				t.Fatalf("columns %q, kube-apiserver's %q\n%s", gh, wh, got)
			}
			if !slices.EqualFunc(gr, wr, slices.Equal) {
				t.Errorf("rows (times masked)\n%q\nkube-apiserver's\n%q\n%s", gr, wr, got)
			}
		})
	}
}

var columnGap = regexp.MustCompile(`\S+( \S+)*`)

// tableCells splits kubectl's table output at its header's column
// offsets (kubectl pads every cell to its column's width) into the
// column titles and each row's cells; cells of the columns that hold
// times (AGE, CREATED AT) read "<time>".
func tableCells(out string) (header []string, rows [][]string) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 {
		return nil, nil
	}
	var starts []int
	for _, m := range columnGap.FindAllStringIndex(lines[0], -1) {
		starts = append(starts, m[0])
		header = append(header, lines[0][m[0]:m[1]])
	}
	for _, l := range lines[1:] {
		var cells []string
		for i, s := range starts {
			end := len(l)
			if i+1 < len(starts) && starts[i+1] < end {
				end = starts[i+1]
			}
			cell := ""
			if s < len(l) {
				cell = strings.TrimSpace(l[s:end])
			}
			if header[i] == "AGE" || header[i] == "CREATED AT" {
				cell = "<time>"
			}
			cells = append(cells, cell)
		}
		rows = append(rows, cells)
	}
	return header, rows
}
