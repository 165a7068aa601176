package apiserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// getAccept GETs path with an Accept header and returns the status, body
// and Content-Length.
func getAccept(t *testing.T, s *testserver.Server, path, accept string) (int, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Accept", accept)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, b, resp.Header.Get("Content-Length")
}

// TestListFromItemEncodings: an unpaged list served from the watch cache,
// written item by item from the objects' shared encodings, is byte for
// byte the encoding of the whole list object, in JSON and in protobuf,
// whether the objects' encodings are made by the list, were made by an
// earlier list, or come from a MODIFIED watch frame; for one namespace,
// all namespaces, a label selector, an empty list and pages (a first
// page with its continue token and remainingItemCount, and the last).
func TestListFromItemEncodings(t *testing.T) {
	s, _ := start(t, nil)
	do := func(method, path, body string, want int) {
		t.Helper()
		code, out, _ := s.Do(t, method, path, "application/json", strings.NewReader(body))
		if code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, out)
		}
	}
	do("POST", "/api/v1/namespaces", `{"metadata":{"name":"other"}}`, http.StatusCreated)
	// Values the JSON encoder escapes (HTML characters, U+2028) and
	// non-ASCII ones.
	tricky := `<b> & \"quoted\" \u2028 ünïcode`
	for i := range 6 {
		ns := "default"
		if i%3 == 2 {
			ns = "other"
		}
		do("POST", "/api/v1/namespaces/"+ns+"/configmaps", fmt.Sprintf(
			`{"metadata":{"name":"cm-%d","labels":{"group":"g%d"},"annotations":{"note":"%s"}},"data":{"k":"%s %d"},"binaryData":{"b":"AAEC"}}`,
			i, i%2, tricky, tricky, i), http.StatusCreated)
	}
	do("POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx",
		"resources":{"requests":{"cpu":"100m","memory":"1Gi"}}}]}}`, http.StatusCreated)

	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cases := []struct {
		name      string
		gvr       schema.GroupVersionResource
		ns, label string
		items     int // -1: not counted
	}{
		{"one namespace", cms, "default", "", 4},
		{"all namespaces", cms, "", "", -1}, // and the server's own
		{"label selector", cms, "", "group=g1", 3},
		{"empty", cms, "empty", "", 0},
		{"pods", pods, "default", "", 1},
	}
	formats := map[string]string{"json": "application/json", "protobuf": protobufType}
	check := func(round string) {
		t.Helper()
		for _, c := range cases {
			for format, accept := range formats {
				path := "/api/v1/" + c.gvr.Resource
				if c.ns != "" {
					path = "/api/v1/namespaces/" + c.ns + "/" + c.gvr.Resource
				}
				if c.label != "" {
					path += "?labelSelector=" + c.label
				}
				compareList(t, s, round+" "+c.name+" "+format, path, accept, c.items, func() ([]byte, error) {
					return apiserver.ListBodyAsObject(s.API, c.gvr, c.ns, c.label, format)
				})
			}
		}
	}
	checkPages := func(round string) {
		t.Helper()
		cont := ""
		for page := 1; page <= 2; page++ {
			path := cmPath + "?limit=3"
			if cont != "" {
				path += "&continue=" + cont
			}
			for format, accept := range formats {
				compareList(t, s, fmt.Sprintf("%s page %d %s", round, page, format), path, accept, -1, func() ([]byte, error) {
					return apiserver.PagedListBodyAsObject(s.API, cms, "default", 3, cont, format)
				})
			}
			_, body, _ := getAccept(t, s, path, "application/json")
			cont = decode[list](t, body).Metadata.Continue
			if (page == 1) != (cont != "") {
				t.Fatalf("%s page %d: continue %q", round, page, cont)
			}
		}
	}
	checkPages("first pages:") // the pages make the items' encodings
	check("first list:")       // the list makes the rest
	check("second list:")      // the items' encodings are the first list's

	// A MODIFIED frame sent to a watcher is the state's encoding.
	_, cur, _ := s.Do(t, "GET", cmPath, "", nil)
	events, code, body := openWatch(t, s, cmPath+"?watch=1&resourceVersion="+decode[list](t, cur).Metadata.ResourceVersion)
	if code != http.StatusOK {
		t.Fatalf("watch: %d %s", code, body)
	}
	do("PUT", "/api/v1/namespaces/default/configmaps/cm-0", `{"metadata":{"name":"cm-0","labels":{"group":"g0"}},"data":{"k":"changed <&>"}}`, http.StatusOK)
	if ev := next(t, events); ev.Type != "MODIFIED" {
		t.Fatalf("watch event %s, want MODIFIED", ev.Type)
	}
	check("after an update:")
	checkPages("after an update:")
}

// compareList GETs path in accept until the body and the list object's
// encoding are at one revision (a progress notification may move the
// cache's revision between the two reads), and fails if they differ.
func compareList(t *testing.T, s *testserver.Server, what, path, accept string, items int, asObject func() ([]byte, error)) {
	t.Helper()
	var got, want []byte
	for range 5 {
		code, body, length := getAccept(t, s, path, accept)
		if code != http.StatusOK {
			t.Fatalf("%s: GET %s: %d %s", what, path, code, body)
		}
		if length != strconv.Itoa(len(body)) {
			t.Fatalf("%s: Content-Length %q for %d bytes", what, length, len(body))
		}
		old, err := asObject()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, want = body, old; bytes.Equal(got, want) {
			break
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: the list differs from the list object's encoding:\n got %q\nwant %q", what, got, want)
	}
	if accept == "application/json" && items >= 0 && bytes.Count(got, []byte(`"uid":`)) != items {
		t.Fatalf("%s: %d items, want %d:\n%s", what, bytes.Count(got, []byte(`"uid":`)), items, got)
	}
}
