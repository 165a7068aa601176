package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/testenv"
)

// Helpers shared by the kubectl row tests (kubectl_*_test.go).

// krDeployment is a Deployment manifest: name, replicas, image; labels
// app=<name> on the object, its selector and its pods.
func krDeployment(name string, replicas int, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels: {app: %[1]s, tier: front}
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: main
        image: %[3]s
        ports:
        - containerPort: 80
`, name, replicas, image)
}

// krJSON runs kubectl with args and decodes its stdout (-o json) into v.
func krJSON(t *testing.T, env *testenv.Environment, v any, args ...string) {
	t.Helper()
	out := kubectl(t, env, "", args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("kubectl %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// krFails runs kubectl and fails the test unless it exits non-zero.
func krFails(t *testing.T, env *testenv.Environment, stdin string, args ...string) kubectlResult {
	t.Helper()
	r := kubectlRun(t, env, stdin, args...)
	if r.Err == nil {
		t.Fatalf("kubectl %s succeeded, want a failure\nstdout: %s", strings.Join(args, " "), r.Stdout)
	}
	return r
}

// krEventually polls cond every 100 ms until it returns true or the
// timeout passes; then it fails the test with cond's last message.
func krEventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %s", timeout, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// krTable splits kubectl's table output into its header and rows, each a
// list of whitespace-separated cells (column titles with spaces, as
// NOMINATED NODE, come out as two cells).
func krTable(out string) (header []string, rows [][]string) {
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if i == 0 {
			header = strings.Fields(line)
			continue
		}
		rows = append(rows, strings.Fields(line))
	}
	return header, rows
}

// krNames is the first column of each row of a table, sorted.
func krNames(out string) []string {
	_, rows := krTable(out)
	var names []string
	for _, r := range rows {
		names = append(names, r[0])
	}
	slices.Sort(names)
	return names
}

// krLines splits output into its non-empty lines.
func krLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}
