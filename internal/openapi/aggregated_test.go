package openapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
	"github.com/setpoint-dev/setpoint/internal/openapi"
)

const (
	aggV2 = `{"swagger":"2.0","info":{"title":"Wardle","version":"0.1"},"paths":{` +
		`"/apis/wardle.example.com/v1alpha1/flunders":{"get":{"operationId":"listFlunders","responses":{"200":{"description":"OK"}}}},` +
		`"/version/":{"get":{"operationId":"theirVersion","responses":{"200":{"description":"OK"}}}}},` +
		`"definitions":{"com.example.wardle.v1alpha1.Flunder":{"type":"object"},"io.k8s.api.core.v1.PodSpec":{"type":"string"}}}`
	aggV3 = `{"openapi":"3.0.0","info":{"title":"Wardle","version":"0.1"},"paths":{}}`
)

// TestAggregated: an aggregated server's group-version joins the v3 index
// and is served; its v2 paths under its group and its new definitions join
// the v2 document (the server's own win); an invalid v2 document adds
// nothing and spoils nothing.
func TestAggregated(t *testing.T) {
	s, srv := newOpenAPIServer(t)
	err := s.SetAggregated([]openapi.Aggregated{
		{Group: "wardle.example.com", V2: []byte(aggV2), V3: map[string][]byte{"apis/wardle.example.com/v1alpha1": []byte(aggV3)}},
		{Group: "broken.example.com", V2: []byte(`{"swagger":"2.0","paths":{"/apis/broken.example.com/v1/x":{"get":{}}}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, body := fetch(t, srv, "/openapi/v3", nil)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatal(err)
	}
	e, ok := index.Paths["apis/wardle.example.com/v1alpha1"]
	if !ok || !strings.HasPrefix(e.ServerRelativeURL, "/openapi/v3/apis/wardle.example.com/v1alpha1?hash=") || index.Paths["api/v1"].ServerRelativeURL == "" {
		t.Fatalf("v3 index %s", body)
	}
	if resp, doc := fetch(t, srv, e.ServerRelativeURL, nil); resp.StatusCode != http.StatusOK || string(doc) != aggV3 {
		t.Errorf("aggregated v3 document: %d %s", resp.StatusCode, doc)
	}

	resp, body := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"application/json"}})
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("v2: %d %v", resp.StatusCode, err)
	}
	if op := sw.Paths.Paths["/apis/wardle.example.com/v1alpha1/flunders"].Get; op == nil || op.ID != "listFlunders" {
		t.Error("v2 lacks the aggregated path")
	}
	if op := sw.Paths.Paths["/version/"].Get; op != nil && op.ID == "theirVersion" {
		t.Error("an aggregated path outside its group replaced the server's own")
	}
	if _, ok := sw.Definitions["com.example.wardle.v1alpha1.Flunder"]; !ok {
		t.Error("v2 lacks the aggregated definition")
	}
	if sw.Definitions["io.k8s.api.core.v1.PodSpec"].Type.Contains("string") {
		t.Error("an aggregated definition replaced the server's own")
	}
	if _, ok := sw.Paths.Paths["/apis/broken.example.com/v1/x"]; ok {
		t.Error("an invalid aggregated document was merged")
	}
	if resp, _ := fetch(t, srv, "/openapi/v2", http.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}}); resp.StatusCode != http.StatusOK {
		t.Errorf("v2 protobuf: %d", resp.StatusCode)
	}

	// Updating the served resources keeps the aggregated documents.
	if err := s.Update(discoverytest.Resources()); err != nil {
		t.Fatal(err)
	}
	if _, body = fetch(t, srv, "/openapi/v3", nil); !strings.Contains(string(body), "apis/wardle.example.com/v1alpha1") {
		t.Error("an Update dropped the aggregated v3 documents")
	}
}
