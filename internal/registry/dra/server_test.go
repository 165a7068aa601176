package dra_test

import (
	"encoding/json"
	"net/http"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry/reftest"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

const base = "/apis/resource.k8s.io/v1/"

// TestTaintTimeAdded checks what the recorded cases (testdata) leave out
// because it is the server's time: a taint without timeAdded gets the
// time of the write (a new slice's, its creation time).
func TestTaintTimeAdded(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	var slice resourcev1.ResourceSlice
	s.Must(t, http.MethodPost, base+"resourceslices", `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"slice"},
		"spec":{"driver":"gpu.example.com","pool":{"name":"pool-a","generation":1,"resourceSliceCount":1},"nodeName":"node-1",
		"devices":[{"name":"gpu-0","taints":[{"key":"a","value":"b","effect":"NoSchedule"}]}]}}`, 201, &slice)
	if added := slice.Spec.Devices[0].Taints[0].TimeAdded; added == nil || !added.Equal(&slice.CreationTimestamp) {
		t.Errorf("slice taint added at %v, created %v", added, slice.CreationTimestamp)
	}
	var rule resourcev1.DeviceTaintRule
	s.Must(t, http.MethodPost, base+"devicetaintrules", `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"rule"},
		"spec":{"deviceSelector":{"driver":"gpu.example.com","pool":"pool-a","device":"gpu-0"},"taint":{"key":"example.com/broken","effect":"NoExecute"}}}`, 201, &rule)
	if rule.Spec.Taint.TimeAdded == nil {
		t.Errorf("rule taint without timeAdded: %+v", rule.Spec.Taint)
	}
}

// TestClaimState checks what the recorded cases (testdata) leave out
// because the reference's resource claim controller drops the reservation
// for a pod that does not exist: a claim allocated and reserved through
// its status keeps both, and its State column says so.
func TestClaimState(t *testing.T) {
	s := reftest.Start(t, testserver.Options{})
	const claims = base + "namespaces/default/resourceclaims"
	s.Must(t, http.MethodPost, claims, `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"claim"},
		"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}}`, 201, nil)
	var claim resourcev1.ResourceClaim
	s.Must(t, http.MethodPatch, claims+"/claim/status", `{"status":{
		"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"pool-a","device":"gpu-0"}]}},
		"reservedFor":[{"resource":"pods","name":"p","uid":"u1"}]}}`, 200, &claim)
	if r := claim.Status.ReservedFor; len(r) != 1 || r[0].Name != "p" || claim.Status.Allocation == nil {
		t.Fatalf("status %+v", claim.Status)
	}
	code, out, _ := s.Send(t, reftest.Request{Method: http.MethodGet, Path: claims + "/claim", Accept: "application/json;as=Table;v=v1;g=meta.k8s.io"})
	var table metav1.Table
	if err := json.Unmarshal(out, &table); code != http.StatusOK || err != nil {
		t.Fatalf("table: %d %s (%v)", code, out, err)
	}
	if len(table.ColumnDefinitions) < 2 || table.ColumnDefinitions[1].Name != "State" || len(table.Rows) != 1 ||
		table.Rows[0].Cells[1] != "allocated,reserved" {
		t.Errorf("table %+v", table)
	}
}
