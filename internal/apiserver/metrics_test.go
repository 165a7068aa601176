package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestMetricsExposeRequestsWatchesAndStorage(t *testing.T) {
	s, _ := start(t, nil)
	createCM(t, s, "m1", nil)
	ch, code, _ := openWatch(t, s, cmPath+"?watch=1")
	if code != http.StatusOK {
		t.Fatal("watch", code)
	}
	next(t, ch) // the ADDED of m1
	s.Do(t, http.MethodGet, cmPath+"/missing", "", nil)
	text := metricsText(t, s)
	for _, want := range []string{
		`apiserver_request_total{code="201",group="",resource="configmaps",scope="namespace",subresource="",verb="CREATE",version="v1"} 1`,
		`apiserver_request_total{code="404",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_duration_seconds_bucket{group="",resource="configmaps",scope="namespace",subresource="",verb="CREATE",version="v1",le="+Inf"} 1`,
		`apiserver_longrunning_requests{group="",resource="configmaps",scope="namespace",verb="WATCH",version="v1"} 1`,
		`apiserver_watch_events_total{group="",kind="ConfigMap",version="v1"} 1`,
		`setpoint_storage_revision `,
		`apiserver_storage_size_bytes `,
		`apiserver_storage_objects{resource="configmaps"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestBookmarkBeforeWatchTimeout(t *testing.T) {
	s, _ := start(t, nil)
	rv := createCM(t, s, "b1", nil)
	ch, code, body := openWatch(t, s, cmPath+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion="+itoa(rv))
	if code != http.StatusOK {
		t.Fatalf("watch: %d %s", code, body)
	}
	var types []string
	for ev := range ch { // the stream ends at the timeout
		types = append(types, ev.Type)
		if ev.Type == "BOOKMARK" {
			if got := decode[object](t, ev.Object).Metadata.ResourceVersion; got == "" || rv > mustAtoi(got) {
				t.Errorf("bookmark resourceVersion %q, want >= %d", got, rv)
			}
		}
	}
	if len(types) == 0 || types[len(types)-1] != "BOOKMARK" {
		t.Errorf("events before the timeout = %v, want a final BOOKMARK", types)
	}
}
