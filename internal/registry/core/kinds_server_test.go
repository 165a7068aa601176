package core_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// call sends a JSON request and decodes the answer into out (when not
// nil), failing unless the code is want.
func call(t *testing.T, c *client, method, path, body string, want int, out any) http.Header {
	t.Helper()
	ctype := "application/json"
	if method == http.MethodPatch {
		ctype = "application/merge-patch+json"
	}
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	code, resp, h := c.do(t, method, path, ctype, "", b)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, resp, want)
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestComponentStatusLeases checks what componentstatuses report of the
// controller manager and the scheduler: healthy while a holder's Lease is
// current, unhealthy with the reason otherwise; the store answers, so
// etcd-0 is healthy.
func TestComponentStatusLeases(t *testing.T) {
	c := serverClient(testserver.Start(t, testserver.Options{}))
	const leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
	now := time.Now().UTC()
	call(t, c, post, leases, fmt.Sprintf(`{"metadata":{"name":"kube-scheduler"},"spec":{"holderIdentity":"s1","leaseDurationSeconds":15,"renewTime":%q}}`,
		now.Format("2006-01-02T15:04:05.000000Z")), http.StatusCreated, nil)
	call(t, c, post, leases, fmt.Sprintf(`{"metadata":{"name":"kube-controller-manager"},"spec":{"holderIdentity":"c1","leaseDurationSeconds":15,"renewTime":%q}}`,
		now.Add(-time.Minute).Format("2006-01-02T15:04:05.000000Z")), http.StatusCreated, nil)

	var list corev1.ComponentStatusList
	h := call(t, c, get, "/api/v1/componentstatuses", "", http.StatusOK, &list)
	if w := h.Get("Warning"); w != `299 - "v1 ComponentStatus is deprecated in v1.19+"` {
		t.Errorf("warning %q", w)
	}
	if list.Kind != "ComponentStatusList" || list.APIVersion != "v1" {
		t.Errorf("list kind %q %q", list.Kind, list.APIVersion)
	}
	got := map[string]corev1.ComponentCondition{}
	var names []string
	for _, cs := range list.Items {
		names = append(names, cs.Name)
		got[cs.Name] = cs.Conditions[0]
	}
	if !slices.Equal(names, []string{"controller-manager", "scheduler", "etcd-0"}) {
		t.Fatalf("components %v", names)
	}
	for name, want := range map[string]corev1.ComponentCondition{
		"scheduler": {Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"},
		"etcd-0":    {Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"},
	} {
		if got[name] != want {
			t.Errorf("%s: %+v, want %+v", name, got[name], want)
		}
	}
	cm := got["controller-manager"]
	if cm.Status != corev1.ConditionFalse || !strings.HasPrefix(cm.Message, "no leader: lease kube-system/kube-controller-manager held by c1 expired at ") {
		t.Errorf("controller-manager: %+v", cm)
	}
	call(t, c, del, leases+"/kube-scheduler", "", http.StatusOK, nil)
	var sched corev1.ComponentStatus
	call(t, c, get, "/api/v1/componentstatuses/scheduler", "", http.StatusOK, &sched)
	if cond := sched.Conditions[0]; cond.Status != corev1.ConditionFalse || cond.Message != "no leader: lease kube-system/kube-scheduler not found" {
		t.Errorf("scheduler without lease: %+v", cond)
	}
}

// TestBindingAssignsPod checks what a binding does to its pod, through both
// forms: the node, the binding's labels and annotations, the nominated
// node cleared, PodScheduled true.
func TestBindingAssignsPod(t *testing.T) {
	c := serverClient(testserver.Start(t, testserver.Options{}))
	const pods = "/api/v1/namespaces/default/pods"
	for _, name := range []string{"a", "b"} {
		call(t, c, post, pods, `{"metadata":{"name":"`+name+`","labels":{"keep":"1"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, http.StatusCreated, nil)
		call(t, c, patch, pods+"/"+name+"/status", `{"status":{"nominatedNodeName":"other","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"no nodes"}]}}`, http.StatusOK, nil)
	}
	call(t, c, post, "/api/v1/namespaces/default/bindings", `{"metadata":{"name":"a","labels":{"l":"v"},"annotations":{"x":"y","pod.beta.kubernetes.io/init-containers":"[]"}},"target":{"name":"n1"}}`, http.StatusCreated, nil)
	call(t, c, post, pods+"/b/binding", `{"metadata":{"name":"b"},"target":{"kind":"Node","name":"n2"}}`, http.StatusCreated, nil)
	var a, b corev1.Pod
	call(t, c, get, pods+"/a", "", http.StatusOK, &a)
	call(t, c, get, pods+"/b", "", http.StatusOK, &b)
	if a.Spec.NodeName != "n1" || a.Labels["l"] != "v" || a.Labels["keep"] != "1" || a.Annotations["x"] != "y" ||
		a.Annotations["pod.beta.kubernetes.io/init-containers"] != "" || a.Status.NominatedNodeName != "" {
		t.Errorf("pod a after binding: node %q labels %v annotations %v nominated %q", a.Spec.NodeName, a.Labels, a.Annotations, a.Status.NominatedNodeName)
	}
	for _, p := range []corev1.Pod{a, b} {
		cond := p.Status.Conditions[0]
		if cond.Type != corev1.PodScheduled || cond.Status != corev1.ConditionTrue || cond.Reason != "" || cond.Message != "" || cond.LastTransitionTime.IsZero() {
			t.Errorf("pod %s: %+v", p.Name, cond)
		}
	}
	if b.Spec.NodeName != "n2" {
		t.Errorf("pod b on %q", b.Spec.NodeName)
	}
	// A dry run binds nothing.
	call(t, c, post, pods, `{"metadata":{"name":"d"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, http.StatusCreated, nil)
	call(t, c, post, "/api/v1/namespaces/default/bindings?dryRun=All", `{"metadata":{"name":"d"},"target":{"name":"n1"}}`, http.StatusCreated, nil)
	var d corev1.Pod
	call(t, c, get, pods+"/d", "", http.StatusOK, &d)
	if d.Spec.NodeName != "" {
		t.Errorf("a dry-run binding bound the pod to %q", d.Spec.NodeName)
	}
}

// TestReplicationControllerOrphansByDefault checks a delete without a
// propagation policy leaves the controller with the orphan finalizer (for
// the garbage collector), and one with a policy removes it at once.
func TestReplicationControllerOrphansByDefault(t *testing.T) {
	c := serverClient(testserver.Start(t, testserver.Options{}))
	const rcs = "/api/v1/namespaces/default/replicationcontrollers"
	body := func(name string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"replicas":0,"template":{"metadata":{"labels":{"app":"` + name + `"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	}
	call(t, c, post, rcs, body("a"), http.StatusCreated, nil)
	call(t, c, post, rcs, body("b"), http.StatusCreated, nil)
	var a corev1.ReplicationController
	call(t, c, del, rcs+"/a", "", http.StatusOK, &a)
	if a.DeletionTimestamp == nil || !slices.Equal(a.Finalizers, []string{"orphan"}) || a.Generation != 2 {
		t.Errorf("after delete: deletionTimestamp %v finalizers %v generation %d", a.DeletionTimestamp, a.Finalizers, a.Generation)
	}
	call(t, c, get, rcs+"/a", "", http.StatusOK, nil)
	var st struct{ Kind string }
	call(t, c, del, rcs+"/b?propagationPolicy=Background", "", http.StatusOK, &st)
	if st.Kind != "Status" {
		t.Errorf("delete with a policy answered %s", st.Kind)
	}
	call(t, c, get, rcs+"/b", "", http.StatusNotFound, nil)
}

// TestVirtualResourcesOpenAPI checks the OpenAPI document lists only the
// operations bindings and componentstatuses serve, as kube-apiserver.
func TestVirtualResourcesOpenAPI(t *testing.T) {
	c := serverClient(testserver.Start(t, testserver.Options{}))
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	call(t, c, get, "/openapi/v2", "", http.StatusOK, &doc)
	for path, want := range map[string][]string{
		"/api/v1/namespaces/{namespace}/bindings": {"parameters", "post"},
		"/api/v1/componentstatuses":               {"get", "parameters"},
		"/api/v1/componentstatuses/{name}":        {"get", "parameters"},
	} {
		var got []string
		for k := range doc.Paths[path] {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: operations %v, want %v", path, got, want)
		}
	}
	for _, path := range []string{"/api/v1/namespaces/{namespace}/bindings/{name}", "/api/v1/watch/componentstatuses"} {
		if _, ok := doc.Paths[path]; ok {
			t.Errorf("%s is published", path)
		}
	}
}
