package reftest

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNormalize: what differs between two servers is dropped or written
// in a fixed form, the ignored paths are dropped, the rest is kept.
func TestNormalize(t *testing.T) {
	const uid = "0f8b1c2d-1111-4222-8333-444455556666"
	for _, c := range []struct {
		name, in string
		ignore   []string
		want     string
	}{{
		name: "object",
		in: `{"kind":"Job","metadata":{"name":"j","uid":"` + uid + `","resourceVersion":"5","creationTimestamp":"2026-01-01T00:00:00Z",
			"managedFields":[{"manager":"m","time":"2026-01-01T00:00:00Z"}],"labels":{"controller-uid":"` + uid + `"}},"status":{"active":1}}`,
		ignore: []string{"status"},
		want:   `{"kind":"Job","metadata":{"name":"j","managedFields":[{"manager":"m"}],"labels":{"controller-uid":"UID"}}}`,
	}, {
		name: "status",
		in: `{"kind":"Status","message":"uid ` + uid + ` and {\"time\":\"2026-01-01T00:00:00Z\"}","details":{"uid":"x",
			"causes":[{"message":"of ` + uid + `"}]}}`,
		want: `{"kind":"Status","message":"uid UID and {\"time\":\"<time>\"}","details":{"causes":[{"message":"of UID"}]}}`,
	}, {
		name: "list",
		in: `{"kind":"List","metadata":{"resourceVersion":"9"},"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"` + uid + `"}},
			{"metadata":{"name":"b","resourceVersion":"3"}}]}`,
		want: `{"kind":"List","metadata":{},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
	}, {
		name: "table: ages, descriptions, an ignored cell",
		in: `{"kind":"Table","columnDefinitions":[{"name":"Name","description":"d"},{"name":"Age"},{"name":"Since"}],
			"rows":[{"cells":["a","5s","1d"],"object":{"metadata":{"name":"a","uid":"` + uid + `"}}},{"cells":["b","3m","2d"]}]}`,
		ignore: []string{"rows.cells.2"},
		want: `{"kind":"Table","columnDefinitions":[{"name":"Name"},{"name":"Age"},{"name":"Since"}],
			"rows":[{"cells":["a",null,null],"object":{"metadata":{"name":"a"}}},{"cells":["b",null,null]}]}`,
	}, {
		name: "everything ignored", in: `{"kind":"Pod"}`, ignore: []string{"*"}, want: `null`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			in := decode(t, c.in)
			got := normalize(in, ownUIDs(in), c.ignore)
			if want := decode(t, c.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", compact(got), compact(want))
			}
		})
	}
}

// TestCollectionPath: the collection a request writes to, whose list must
// be unchanged after a refusal.
func TestCollectionPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/namespaces/ns/pods/p/status?dryRun=All":                     "/api/v1/namespaces/ns/pods",
		"/api/v1/namespaces/ns":                                              "/api/v1/namespaces",
		"/api/v1/namespaces/ns/status":                                       "/api/v1/namespaces",
		"/apis/apps/v1/namespaces/ns/deployments":                            "/apis/apps/v1/namespaces/ns/deployments",
		"/apis/storage.k8s.io/v1/storageclasses/fast":                        "/apis/storage.k8s.io/v1/storageclasses",
		"/apis/certificates.k8s.io/v1/certificatesigningrequests/c/approval": "/apis/certificates.k8s.io/v1/certificatesigningrequests",
		"/healthz": "",
	} {
		if got := collectionPath(in); got != want {
			t.Errorf("collectionPath(%s) = %q, want %q", in, got, want)
		}
	}
}
