package core_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const smp = "application/strategic-merge-patch+json"

// invalidCauses decodes a 422's causes as "field: reason".
func invalidCauses(t *testing.T, code int, body string) []string {
	t.Helper()
	var st apiStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != 422 || st.Reason != "Invalid" {
		t.Fatalf("want a 422 Invalid, got %d %s", code, body)
	}
	var out []string
	for _, c := range st.Details.Causes {
		out = append(out, c.Field+": "+c.Reason)
	}
	return out
}

// refused checks a 422 with the given causes and that the pod is
// unchanged.
func refused(t *testing.T, s *testserver.Server, what, method, path, ctype, body string, want ...string) {
	t.Helper()
	_, before := getPodObj(t, s, "web")
	code, out := send(t, s, method, path, ctype, body)
	if got := invalidCauses(t, code, out); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("%s: causes %v, want %v (%s)", what, got, want, out)
	}
	if _, after := getPodObj(t, s, "web"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("%s: a refused write changed the pod", what)
	}
}

func TestEphemeralContainers(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	mustSend(t, s, http.MethodPost, podsPath, "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"n1","volumes":[{"name":"v","emptyDir":{}}],"containers":[{"name":"app","image":"nginx:1.25"}]}}`, 201)
	path := podsPath + "/web/ephemeralcontainers"

	var got corev1.Pod
	if err := json.Unmarshal([]byte(mustSend(t, s, http.MethodGet, path, "", "", 200)), &got); err != nil || got.Name != "web" || got.Kind != "Pod" {
		t.Fatalf("get: %v %+v", err, got.TypeMeta)
	}
	// What kubectl debug sends: a strategic merge patch adding one.
	out := mustSend(t, s, http.MethodPatch, path, smp,
		`{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox","stdin":true,"tty":true,"resources":{}}],"containers":[{"name":"app","image":"ignored"}]}}`, 200)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	ec := got.Spec.EphemeralContainers
	if len(ec) != 1 || ec[0].ImagePullPolicy != corev1.PullAlways || ec[0].TerminationMessagePolicy != corev1.TerminationMessageReadFile ||
		ec[0].TerminationMessagePath != "/dev/termination-log" || got.Spec.Containers[0].Image != "nginx:1.25" || got.Generation != 2 {
		t.Errorf("added: %+v, containers %+v, generation %d", ec, got.Spec.Containers, got.Generation)
	}

	refused(t, s, "removal", http.MethodPatch, path, "application/merge-patch+json", `{"spec":{"ephemeralContainers":null}}`,
		"spec.ephemeralContainers: FieldValueForbidden")
	code, body := send(t, s, http.MethodPatch, path, "application/merge-patch+json", `{"spec":{"ephemeralContainers":null}}`)
	if st := expectStatusCode(t, code, body); !strings.Contains(st.Message, "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be removed\n") {
		t.Errorf("removal message %q", st.Message)
	}
	refused(t, s, "change", http.MethodPatch, path, smp, `{"spec":{"ephemeralContainers":[{"name":"debugger","image":"alpine"}]}}`,
		"spec.ephemeralContainers: FieldValueForbidden")
	code, body = send(t, s, http.MethodPatch, path, smp, `{"spec":{"ephemeralContainers":[{"name":"debugger","image":"alpine"}]}}`)
	// kube-apiserver's diff of its internal types, as it sent it.
	wantChange := "Pod \"web\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be changed\n" +
		"@@ -1,6 +1,6 @@\n {\n  \"Name\": \"debugger\",\n- \"Image\": \"busybox\",\n+ \"Image\": \"alpine\",\n  \"Command\": null,\n  \"Args\": null,\n  \"WorkingDir\": \"\",\n"
	if st := expectStatusCode(t, code, body); st.Message != wantChange {
		t.Errorf("change message %q", st.Message)
	}
	refused(t, s, "duplicate name", http.MethodPatch, path, smp, `{"spec":{"ephemeralContainers":[{"name":"app","image":"busybox"}]}}`,
		"spec.ephemeralContainers[0].name: FieldValueDuplicate")
	refused(t, s, "fields not allowed", http.MethodPatch, path, smp,
		`{"spec":{"ephemeralContainers":[{"name":"d2","image":"busybox","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}},"readinessProbe":{"exec":{"command":["true"]}}}]}}`,
		"spec.ephemeralContainers[0].ports: FieldValueForbidden",
		"spec.ephemeralContainers[0].resources: FieldValueForbidden",
		"spec.ephemeralContainers[0].readinessProbe: FieldValueForbidden")
	refused(t, s, "unknown target", http.MethodPatch, path, smp,
		`{"spec":{"ephemeralContainers":[{"name":"d3","image":"busybox","targetContainerName":"nope"}]}}`,
		"spec.ephemeralContainers[0].targetContainerName: FieldValueNotFound")
	refused(t, s, "subPath", http.MethodPatch, path, smp,
		`{"spec":{"ephemeralContainers":[{"name":"d4","image":"busybox","volumeMounts":[{"name":"v","mountPath":"/v","subPath":"x"}]}]}}`,
		"spec.ephemeralContainers[0].volumeMounts[0].subPath: FieldValueForbidden")
	mustSend(t, s, http.MethodPatch, path, smp, `{"spec":{"ephemeralContainers":[{"name":"d5","image":"busybox","targetContainerName":"app"}]}}`, 200)
	code, body = send(t, s, http.MethodDelete, path, "", "")
	expectStatus(t, "DELETE", code, body, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
}

func TestEphemeralContainersOfStaticPods(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	mustSend(t, s, http.MethodPost, podsPath, "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","annotations":{"kubernetes.io/config.mirror":"x"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`, 201)
	refused(t, s, "static pod", http.MethodPatch, podsPath+"/web/ephemeralcontainers", smp,
		`{"spec":{"ephemeralContainers":[{"name":"d","image":"busybox"}]}}`, "[]: FieldValueForbidden")
}

func expectStatusCode(t *testing.T, code int, body string) apiStatus {
	t.Helper()
	var st apiStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%d %s", code, body)
	}
	return st
}
