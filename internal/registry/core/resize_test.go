package core_test

import (
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// resizablePod creates pod "web" (Burstable: cpu request 100m, memory
// limit 128Mi, ephemeral-storage request 1Gi) running on a node that
// reports container resources when reported is set.
func resizablePod(t *testing.T, s *testserver.Server, reported bool) {
	t.Helper()
	mustSend(t, s, http.MethodPost, "/api/v1/nodes", "application/json",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"kubernetes.io/os":"linux"}},"status":{"allocatable":{"cpu":"1","memory":"1Gi"}}}`, 201)
	mustSend(t, s, http.MethodPost, podsPath, "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"n1","containers":[{"name":"app","image":"nginx:1.25",`+
			`"resources":{"requests":{"cpu":"100m","ephemeral-storage":"1Gi"},"limits":{"memory":"128Mi"}}}]}}`, 201)
	res := ""
	if reported {
		res = `,"resources":{"requests":{"cpu":"100m"},"limits":{"memory":"128Mi"}}`
	}
	mustSend(t, s, http.MethodPatch, podsPath+"/web/status", "application/merge-patch+json",
		`{"status":{"phase":"Running","containerStatuses":[{"name":"app","image":"nginx:1.25","imageID":"x","ready":true,"restartCount":0,`+
			`"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}`+res+`}]}}`, 200)
}

func TestResize(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	resizablePod(t, s, true)
	path := podsPath + "/web/resize"
	out := mustSend(t, s, http.MethodPatch, path, smp,
		`{"spec":{"containers":[{"name":"app","image":"ignored","resources":{"requests":{"cpu":"250m"},"limits":{"memory":"256Mi"}}}]}}`, 200)
	var p corev1.Pod
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	c := p.Spec.Containers[0]
	if c.Resources.Requests.Cpu().Cmp(resource.MustParse("250m")) != 0 || c.Resources.Limits.Memory().Cmp(resource.MustParse("256Mi")) != 0 ||
		c.Image != "nginx:1.25" || p.Generation != 2 {
		t.Errorf("resized: %+v image %s generation %d", c.Resources, c.Image, p.Generation)
	}
	for _, c := range []struct {
		what, patch string
		want        []string
	}{
		{"a request removed", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":null}}}]}}`,
			[]string{"spec.containers[0].resources.requests: FieldValueForbidden"}},
		{"another resource", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"2Gi"}}}]}}`,
			[]string{"spec: FieldValueForbidden"}},
		{"the QoS class", `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1","memory":"256Mi"},"limits":{"cpu":"1","memory":"256Mi"}}}]}}`,
			[]string{"spec: FieldValueInvalid"}},
		{"a container added", `{"spec":{"containers":[{"name":"more","image":"busybox"}]}}`,
			[]string{"spec.containers: FieldValueForbidden"}},
	} {
		refused(t, s, c.what, http.MethodPatch, path, smp, c.patch, c.want...)
	}
	// kube-apiserver's PodResizeValidator admission: the node must hold the
	// pod's requests.
	_, before := getPodObj(t, s, "web")
	code, body := send(t, s, http.MethodPatch, path, smp, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1500m","memory":"2Gi"},"limits":{"memory":"2Gi"}}}]}}`)
	st := expectStatus(t, "capacity", code, body, 403, "Forbidden",
		`pods "web" is forbidden: node didn't have enough allocatable resources: cpu, requested: 1500, allocatable: 1000; memory, requested: 2147483648, allocatable: 1073741824`)
	if len(st.Details.Causes) != 1 || st.Details.Causes[0].Reason != "NodeCapacity" || st.Details.Kind != "pods" || st.Details.Name != "web" {
		t.Errorf("capacity details %+v", st.Details)
	}
	if _, after := getPodObj(t, s, "web"); after.ResourceVersion != before.ResourceVersion {
		t.Error("a refused resize changed the pod")
	}
	mustSend(t, s, http.MethodDelete, "/api/v1/nodes/n1", "", "", 200)
	code, body = send(t, s, http.MethodPatch, path, smp, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`)
	expectStatus(t, "no node", code, body, 403, "Forbidden", `pods "web" is forbidden: node "n1" not found`)

	code, body = send(t, s, http.MethodPatch, path, smp, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"ephemeral-storage":"2Gi"}}}]}}`)
	expectStatus(t, "message", code, body, 422, "Invalid", `Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable`)
	code, body = send(t, s, http.MethodPatch, path, smp, `{"spec":{"containers":[{"name":"more","image":"busybox"}]}}`)
	expectStatus(t, "message", code, body, 422, "Invalid", `Pod "web" is invalid: spec.containers: Forbidden: containers may not be added or removed on resize`)
}

func TestResizeNeedsANodeThatReportsResources(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	resizablePod(t, s, false)
	code, body := send(t, s, http.MethodPatch, podsPath+"/web/resize", smp, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}`)
	expectStatus(t, "old node", code, body, 422, "Invalid", `Pod "web" is invalid: spec: Forbidden: Pod running on node without support for resize`)
}
