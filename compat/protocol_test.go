package compat

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/compat/internal/difftest"
)

// protocolNamespace holds the objects of the protocol category that no
// case changes (watches see them only); deletions happen in
// deletionNamespace.
const (
	protocolNamespace = "c-protocol"
	deletionNamespace = "c-protocol-del"
)

// protocolCase is one request of the protocol category.
type protocolCase struct {
	name string
	req  difftest.Request
	// stream compares a watch stream by its events (type, object kind and
	// name, Status message), not its bytes.
	stream bool
	// then is a request sent after req whose answer is compared too (the
	// state a dry run left, say).
	then *difftest.Request
	// codeOnly compares the code and the Location header only.
	codeOnly bool
}

// TestProtocol compares the answers of both servers to requests about the
// API's protocol rather than a kind: boolean query parameters spelled
// every way, watches (from a too-old resourceVersion, streaming lists),
// dry runs and what they leave, deletion answers, 404/405/406/415, the
// Table and PartialObjectMetadata views, list options.
func TestProtocol(t *testing.T) {
	rep := difftest.NewReport(t, env.allow, "protocol", env.sink)
	defer rep.Finish()
	ensureNamespace(t, protocolNamespace)
	cm := "/api/v1/namespaces/" + protocolNamespace + "/configmaps"
	for _, name := range []string{"a", "b", "c"} {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"protocol"}},"data":{"k":"v"}}`, name)
		both(t, difftest.Request{Method: "POST", Path: cm, Body: []byte(body)})
	}
	var cases []protocolCase
	cases = append(cases, boolCases(cm)...)
	cases = append(cases, watchCases(cm)...)
	cases = append(cases, dryRunCases(cm)...)
	cases = append(cases, errorCases(cm)...)
	cases = append(cases, viewCases(cm)...)
	cases = append(cases, listCases(cm)...)
	ensureNamespace(t, deletionNamespace)
	cases = append(cases, deletionCases(t, "/api/v1/namespaces/"+deletionNamespace+"/configmaps")...)

	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, c := range cases {
		wg.Add(1)
		go func(c protocolCase) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runProtocolCase(t, rep, c)
		}(c)
	}
	wg.Wait()
}

func runProtocolCase(t *testing.T, rep *difftest.Report, c protocolCase) {
	p, err := difftest.Both(t.Context(), env.ref, env.sp, c.req)
	if err != nil {
		t.Error(err)
		return
	}
	ra, sa := answer(p.Ref, difftest.Normalization{}), answer(p.SP, difftest.Normalization{})
	shapeTable("", ra) // column descriptions are setpoint's own
	shapeTable("", sa)
	switch {
	case c.stream:
		ra, sa = streamAnswer(p.Ref), streamAnswer(p.SP)
	case c.codeOnly:
		ra = map[string]any{"code": ra["code"], "location": p.Ref.Header.Get("Location")}
		sa = map[string]any{"code": sa["code"], "location": p.SP.Header.Get("Location")}
	}
	rep.Compare("protocol/"+c.name, ra, sa)
	if c.then != nil {
		p, err := difftest.Both(t.Context(), env.ref, env.sp, *c.then)
		if err != nil {
			t.Error(err)
			return
		}
		rep.Compare("protocol/"+c.name+"/then", answer(p.Ref, difftest.Normalization{}), answer(p.SP, difftest.Normalization{}))
	}
}

// streamAnswer is a watch stream as compared: code, media type, and per
// event its type, the object's kind and name, and a Status's reason,
// code and message (a list answer is kept whole, normalized).
func streamAnswer(r *difftest.Response) map[string]any {
	a := map[string]any{"code": difftest.Number(r.Code), "contentType": r.MediaType()}
	if r.Code != 200 || r.MediaType() != "application/json" {
		return answer(r, difftest.Normalization{})
	}
	var events []any
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		ev, _ := difftest.DecodeJSON(sc.Bytes()).(map[string]any)
		if ev == nil {
			continue
		}
		if _, isWatch := ev["type"]; !isWatch {
			// Not a watch: a list.
			return answer(r, difftest.Normalization{})
		}
		obj, _ := ev["object"].(map[string]any)
		if ev["type"] == "BOOKMARK" && difftest.Get(obj, "metadata.annotations") == nil {
			// Periodic bookmarks are sent when the server sees fit: not
			// compared. The one ending the initial events is.
			continue
		}
		e := map[string]any{"type": ev["type"], "kind": obj["kind"]}
		if name := difftest.Get(obj, "metadata.name"); name != nil {
			e["name"] = name
		}
		if ann := difftest.Get(obj, "metadata.annotations"); ann != nil {
			e["annotations"] = ann
		}
		for _, k := range []string{"reason", "code", "message"} {
			if v, ok := obj[k]; ok {
				e[k] = v
			}
		}
		events = append(events, e)
	}
	a["events"] = difftest.Normalize(events, difftest.Normalization{})
	return a
}

// The spellings of a boolean query parameter: kube-apiserver takes
// absent, "0" and "false" in any case as false, anything else as true.
var boolSpellings = []string{"", "true", "True", "TRUE", "1", "t", "yes", "0", "false", "False", "FALSE", "no"}

// queryTrue is how kube-apiserver reads a boolean query parameter.
func queryTrue(v string) bool { return v != "0" && !strings.EqualFold(v, "false") }

// initialEventsEnd is a watch line of the bookmark ending the initial
// events.
func initialEventsEnd(line []byte) bool {
	return bytes.Contains(line, []byte(`"k8s.io/initial-events-end"`))
}

// streamingList is a streaming-list watch that waits (up to 15 s) for the
// bookmark ending the initial events when one is due: kube-apiserver sends
// it once its cache has caught up with etcd, which takes a moment.
func streamingList(path string, q url.Values, due bool) difftest.Request {
	q.Set("timeoutSeconds", "2")
	if due {
		q.Set("timeoutSeconds", "15")
	}
	return difftest.Request{Path: path + "?" + q.Encode(), StopAt: initialEventsEnd}
}

func boolCases(cm string) []protocolCase {
	var out []protocolCase
	for _, v := range boolSpellings {
		q := url.Values{"watch": {v}, "timeoutSeconds": {"1"}}
		out = append(out, protocolCase{name: "watch=" + v, stream: true, req: difftest.Request{Path: cm + "?" + q.Encode()}})
		q = url.Values{"watch": {"1"}, "allowWatchBookmarks": {v}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}}
		out = append(out, protocolCase{name: "allowWatchBookmarks=" + v, stream: true, req: streamingList(cm, q, queryTrue(v))})
		q = url.Values{"watch": {"1"}, "sendInitialEvents": {v}, "allowWatchBookmarks": {"true"}, "resourceVersionMatch": {"NotOlderThan"}}
		out = append(out, protocolCase{name: "sendInitialEvents=" + v, stream: true, req: streamingList(cm, q, queryTrue(v))})
		q = url.Values{"sendInitialEvents": {v}}
		out = append(out, protocolCase{name: "list sendInitialEvents=" + v, req: difftest.Request{Path: cm + "?" + q.Encode()}})
		out = append(out, protocolCase{name: "pretty=" + v, req: difftest.Request{Path: cm + "/a?pretty=" + url.QueryEscape(v)}})
	}
	return out
}

func watchCases(cm string) []protocolCase {
	w := func(name, q string) protocolCase {
		return protocolCase{name: name, stream: true, req: difftest.Request{Path: cm + "?" + q}}
	}
	return []protocolCase{
		w("watch too old resourceVersion", "watch=1&resourceVersion=1&timeoutSeconds=1"),
		w("watch resourceVersion 0", "watch=1&resourceVersion=0&timeoutSeconds=1"),
		w("watch label selector", "watch=1&labelSelector=app%3Dprotocol&timeoutSeconds=1"),
		w("watch field selector", "watch=1&fieldSelector=metadata.name%3Db&timeoutSeconds=1"),
		w("watch unsupported field selector", "watch=1&fieldSelector=data.k%3Dv&timeoutSeconds=1"),
		w("watch bad resourceVersion", "watch=1&resourceVersion=abc&timeoutSeconds=1"),
		w("streaming list without match", "watch=1&sendInitialEvents=true&timeoutSeconds=1"),
		w("streaming list with Exact", "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&timeoutSeconds=1"),
		w("deprecated watch path", "timeoutSeconds=1"),
		{name: "deprecated watch path item", stream: true, req: difftest.Request{Path: "/api/v1/watch/namespaces/" + protocolNamespace + "/configmaps/a?timeoutSeconds=1"}},
		{name: "deprecated watch path list", stream: true, req: difftest.Request{Path: "/api/v1/watch/namespaces/" + protocolNamespace + "/configmaps?timeoutSeconds=1"}},
		{name: "watch as Table", stream: true, req: difftest.Request{Path: cm + "?watch=1&timeoutSeconds=1", Header: map[string]string{"Accept": tableAccept}}},
	}
}

func dryRunCases(cm string) []protocolCase {
	body := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":"dry"}}`, name))
	}
	get := func(name string) *difftest.Request { return &difftest.Request{Path: cm + "/" + name} }
	return []protocolCase{
		{name: "dry-run create leaves nothing", req: difftest.Request{Method: "POST", Path: cm + "?dryRun=All", Body: body("dry")}, then: get("dry")},
		{name: "dry-run create twice", req: difftest.Request{Method: "POST", Path: cm + "?dryRun=All&dryRun=All", Body: body("dry2")}},
		{name: "dry-run lowercase", req: difftest.Request{Method: "POST", Path: cm + "?dryRun=all", Body: body("dry3")}},
		{name: "dry-run update leaves the object", req: difftest.Request{Method: "PUT", Path: cm + "/b?dryRun=All", Body: body("b")}, then: get("b")},
		{name: "dry-run patch leaves the object", req: difftest.Request{Method: "PATCH", Path: cm + "/b?dryRun=All",
			Body: []byte(`{"data":{"k":"patched"}}`), Header: map[string]string{"Content-Type": "application/merge-patch+json"}}, then: get("b")},
		{name: "dry-run delete leaves the object", req: difftest.Request{Method: "DELETE", Path: cm + "/c?dryRun=All"}, then: get("c")},
		{name: "dry-run deletecollection leaves the objects", req: difftest.Request{Method: "DELETE", Path: cm + "?dryRun=All&labelSelector=app%3Dprotocol"},
			then: &difftest.Request{Path: cm + "?labelSelector=app%3Dprotocol"}},
		{name: "dry-run delete of a missing object", req: difftest.Request{Method: "DELETE", Path: cm + "/nosuch?dryRun=All"}},
	}
}

func errorCases(cm string) []protocolCase {
	r := func(name, method, path string, hdr map[string]string, body string) protocolCase {
		req := difftest.Request{Method: method, Path: path, Header: hdr}
		if body != "" {
			req.Body = []byte(body)
		}
		return protocolCase{name: name, req: req}
	}
	html := map[string]string{"Accept": "text/html"}
	return []protocolCase{
		r("unknown resource", "GET", "/api/v1/namespaces/"+protocolNamespace+"/widgets", nil, ""),
		r("unknown group", "GET", "/apis/nonsense.example.com/v1/widgets", nil, ""),
		r("unknown version", "GET", "/api/v9/namespaces", nil, ""),
		r("unknown subresource", "GET", cm+"/a/nosuch", nil, ""),
		r("cluster-scoped under a namespace", "GET", "/api/v1/namespaces/default/nodes", nil, ""),
		r("missing object", "GET", cm+"/nosuch", nil, ""),
		r("missing namespace list", "GET", "/api/v1/namespaces/nosuch/configmaps", nil, ""),
		r("create in a missing namespace", "POST", "/api/v1/namespaces/nosuch/configmaps", nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`),
		r("POST to an object", "POST", cm+"/a", nil, `{}`),
		r("PUT to a collection", "PUT", cm, nil, `{}`),
		r("PATCH a collection", "PATCH", cm, map[string]string{"Content-Type": "application/merge-patch+json"}, `{}`),
		r("DELETE all namespaces", "DELETE", "/api/v1/namespaces", nil, ""),
		r("not acceptable list", "GET", cm, html, ""),
		r("not acceptable object", "GET", cm+"/a", html, ""),
		r("not acceptable status", "GET", "/api/v1/namespaces/"+protocolNamespace+"/status", html, ""),
		r("unsupported media type", "POST", cm, map[string]string{"Content-Type": "text/plain"}, "x"),
		r("protobuf body that is not protobuf", "POST", cm, map[string]string{"Content-Type": "application/vnd.kubernetes.protobuf"}, "{}"),
		r("delete the default namespace", "DELETE", "/api/v1/namespaces/default", nil, ""),
		r("delete kube-system", "DELETE", "/api/v1/namespaces/kube-system", nil, ""),
		r("invalid label selector", "GET", cm+"?labelSelector=a%3D%3D%3Db", nil, ""),
		r("unsupported field selector", "GET", cm+"?fieldSelector=spec.x%3Dy", nil, ""),
		r("bad resourceVersion", "GET", cm+"?resourceVersion=abc", nil, ""),
		r("resourceVersionMatch without resourceVersion", "GET", cm+"?resourceVersionMatch=Exact", nil, ""),
		r("resourceVersionMatch bad", "GET", cm+"?resourceVersion=1&resourceVersionMatch=Sometimes", nil, ""),
		r("limit negative", "GET", cm+"?limit=-1", nil, ""),
		r("limit not a number", "GET", cm+"?limit=many", nil, ""),
		r("continue garbage", "GET", cm+"?limit=1&continue=garbage", nil, ""),
		r("timeoutSeconds not a number", "GET", cm+"?watch=1&timeoutSeconds=soon", nil, ""),
		r("version", "GET", "/version", nil, ""),
		r("healthz", "GET", "/healthz", nil, ""),
		r("livez", "GET", "/livez", nil, ""),
		r("readyz", "GET", "/readyz", nil, ""),
		r("openapi v3 unknown document", "GET", "/openapi/v3/apis/nonsense.example.com/v1", nil, ""),
		{name: "openapi v3 stale hash", codeOnly: true, req: difftest.Request{Path: "/openapi/v3/api/v1?hash=0000"}},
	}
}

func viewCases(cm string) []protocolCase {
	h := func(accept string) map[string]string { return map[string]string{"Accept": accept} }
	const pom = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	const poml = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	return []protocolCase{
		{name: "table list", req: difftest.Request{Path: cm + "?labelSelector=app%3Dprotocol", Header: h(tableAccept)}},
		{name: "table object", req: difftest.Request{Path: cm + "/a", Header: h(tableAccept)}},
		{name: "table includeObject=None", req: difftest.Request{Path: cm + "/a?includeObject=None", Header: h(tableAccept)}},
		{name: "table includeObject=Object", req: difftest.Request{Path: cm + "/a?includeObject=Object", Header: h(tableAccept)}},
		{name: "table includeObject=bad", req: difftest.Request{Path: cm + "/a?includeObject=Everything", Header: h(tableAccept)}},
		{name: "table v1beta1", req: difftest.Request{Path: cm + "/a", Header: h("application/json;as=Table;v=v1beta1;g=meta.k8s.io")}},
		{name: "table or json", req: difftest.Request{Path: cm + "/a", Header: h(tableAccept + ",application/json")}},
		{name: "partial object metadata", req: difftest.Request{Path: cm + "/a", Header: h(pom)}},
		{name: "partial object metadata list", req: difftest.Request{Path: cm + "?labelSelector=app%3Dprotocol", Header: h(poml)}},
		{name: "partial object metadata list for an object", req: difftest.Request{Path: cm + "/a", Header: h(poml)}},
		{name: "partial object metadata for a list", req: difftest.Request{Path: cm, Header: h(pom)}},
		{name: "yaml object", req: difftest.Request{Path: cm + "/a", Header: h("application/yaml")}},
		// A Table has no protobuf form: the entry is passed over.
		{name: "table in protobuf or json", req: difftest.Request{Path: cm + "/a", Header: h("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json")}},
		{name: "table of a missing object", req: difftest.Request{Path: cm + "/nosuch", Header: h(tableAccept)}},
		{name: "table of namespaces", req: difftest.Request{Path: "/api/v1/namespaces/" + protocolNamespace, Header: h(tableAccept)}},
	}
}

func listCases(cm string) []protocolCase {
	l := func(name, q string) protocolCase {
		return protocolCase{name: name, req: difftest.Request{Path: cm + "?" + q}}
	}
	return []protocolCase{
		l("list with limit", "labelSelector=app%3Dprotocol&limit=2"),
		l("list with limit 0", "labelSelector=app%3Dprotocol&limit=0"),
		l("list resourceVersion 0 with limit", "labelSelector=app%3Dprotocol&limit=1&resourceVersion=0"),
		l("list label selector set", "labelSelector=app+in+%28protocol%2Cother%29"),
		l("list field selector name", "fieldSelector=metadata.name%3Da"),
		l("list field selector name not", "fieldSelector=metadata.name%21%3Da&labelSelector=app%3Dprotocol"),
		l("list field selector namespace", "fieldSelector=metadata.namespace%3D"+protocolNamespace+"&labelSelector=app%3Dprotocol"),
		l("list resourceVersion too large", "resourceVersion=999999999&resourceVersionMatch=NotOlderThan"),
		l("list Exact too old", "resourceVersion=1&resourceVersionMatch=Exact"),
		l("list Exact without limit", "resourceVersion=1&resourceVersionMatch=Exact&labelSelector=app%3Dnone"),
	}
}

// deletionCases create objects to delete, then return the deletions.
func deletionCases(t *testing.T, cm string) []protocolCase {
	for _, name := range []string{"del-plain", "del-fg", "del-orphan", "del-grace", "del-body-fg", "del-body-orphan-dependents"} {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"del":"x"}}}`, name)
		both(t, difftest.Request{Method: "POST", Path: cm, Body: []byte(body)})
	}
	nsBody := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c-protocol-doomed"}}`)
	both(t, difftest.Request{Method: "POST", Path: "/api/v1/namespaces", Body: nsBody})
	d := func(name, path, body string, then *difftest.Request) protocolCase {
		req := difftest.Request{Method: "DELETE", Path: path}
		if body != "" {
			req.Body = []byte(body)
		}
		return protocolCase{name: name, req: req, then: then}
	}
	return []protocolCase{
		d("delete answers Status", cm+"/del-plain", "", &difftest.Request{Path: cm + "/del-plain"}),
		d("delete foreground", cm+"/del-fg?propagationPolicy=Foreground", "", &difftest.Request{Path: cm + "/del-fg"}),
		d("delete orphan", cm+"/del-orphan?propagationPolicy=Orphan", "", nil),
		d("delete grace period", cm+"/del-grace?gracePeriodSeconds=30", "", nil),
		d("delete body foreground", cm+"/del-body-fg", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`, nil),
		d("delete body orphanDependents", cm+"/del-body-orphan-dependents", `{"kind":"DeleteOptions","apiVersion":"v1","orphanDependents":true}`, nil),
		d("delete body in another group's version", cm+"/nosuch", `{"kind":"DeleteOptions","apiVersion":"apps/v1"}`, nil),
		d("delete body of another kind", cm+"/nosuch", `{"kind":"ConfigMap","apiVersion":"v1"}`, nil),
		d("delete body not json", cm+"/nosuch", `{`, nil),
		d("delete a namespace", "/api/v1/namespaces/c-protocol-doomed", "", &difftest.Request{Path: "/api/v1/namespaces/c-protocol-doomed"}),
		d("deletecollection", cm+"?labelSelector=del%3Dnone", "", nil),
	}
}
