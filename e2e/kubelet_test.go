package e2e

import (
	"strings"
	"testing"
	"time"
)

const jobLikePod = `apiVersion: v1
kind: Pod
metadata:
  name: once
  annotations:
    setpoint.dev/run-time: 2s
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: busybox}
`

const configPod = `apiVersion: v1
kind: Pod
metadata:
  name: needs-config
spec:
  containers:
  - name: app
    image: nginx
    envFrom:
    - configMapRef: {name: settings}
`

const initPod = `apiVersion: v1
kind: Pod
metadata:
  name: staged
  annotations:
    setpoint.dev/run-time: "first=6s,second=6s"
spec:
  initContainers:
  - {name: first, image: busybox}
  - {name: second, image: busybox}
  containers:
  - {name: app, image: nginx}
`

// TestKubeletLifecycle drives the simulated kubelet with kubectl against
// `setpoint up`: a pod meant to finish goes Succeeded and its log tells
// its run; a pod missing its ConfigMap waits in CreateContainerConfigError
// until `kubectl create configmap`; init containers run in order, as
// `kubectl get pod` shows (Init:0/2, Init:1/2, Running).
func TestKubeletLifecycle(t *testing.T) {
	t.Parallel()
	cl := startUp(t, 1)
	status := func(pod string) string {
		out, _, err := cl.kubectlErr(t, "", "get", "pod", pod, "--no-headers")
		if f := strings.Fields(out); err == nil && len(f) >= 3 {
			return f[2]
		}
		return ""
	}
	cl.kubectl(t, initPod, "apply", "-f", "-")
	cl.kubectl(t, jobLikePod, "apply", "-f", "-")
	cl.kubectl(t, configPod, "apply", "-f", "-")

	var seen []string
	eventually(t, 40*time.Second, "staged running", func() string {
		s := status("staged")
		if len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		if s != "Running" {
			return "status " + s
		}
		return ""
	})
	order := map[string]int{"": 0, "Pending": 0, "Init:0/2": 1, "Init:1/2": 2, "Running": 3}
	last, hits := 0, map[string]bool{}
	for _, s := range seen {
		o, ok := order[s]
		if !ok || o < last {
			t.Fatalf("staged went through %v", seen)
		}
		last, hits[s] = o, true
	}
	if !hits["Init:0/2"] || !hits["Init:1/2"] {
		t.Errorf("staged went through %v, want Init:0/2 then Init:1/2", seen)
	}

	cl.kubectl(t, "", "wait", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=30s", "pod/once")
	if s := status("once"); s != "Completed" {
		t.Errorf("once: STATUS %s, want Completed", s)
	}
	logs := cl.kubectl(t, "", "logs", "once")
	if !strings.HasPrefix(logs, "[setpoint] container main started: image busybox") ||
		!strings.HasSuffix(logs, "[setpoint] container main exited with code 0 (Completed)\n") {
		t.Errorf("once: logs %q", logs)
	}

	if s := status("needs-config"); s != "CreateContainerConfigError" {
		t.Errorf("needs-config: STATUS %s", s)
	}
	desc := cl.kubectl(t, "", "describe", "pod", "needs-config")
	if !strings.Contains(desc, `Error: configmap "settings" not found`) {
		t.Errorf("needs-config: describe shows no Failed event:\n%s", desc)
	}
	cl.kubectl(t, "", "create", "configmap", "settings", "--from-literal=mode=fast")
	cl.kubectl(t, "", "wait", "--for=condition=Ready", "--timeout=30s", "pod/needs-config")
}
