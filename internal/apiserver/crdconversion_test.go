package apiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/crconversion/crconversiontest"
	"github.com/setpoint-dev/setpoint/internal/storage"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

const convGroup = "conv.example.com"

func convPath(version, name string) string {
	p := "/apis/" + convGroup + "/" + version + "/namespaces/default/widgets"
	if name != "" {
		p += "/" + name
	}
	return p
}

// widgetObj is a Widget of either version.
type widgetObj struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		ResourceVersion   string            `json:"resourceVersion"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		HostPort string `json:"hostPort"`
		Host     string `json:"host"`
		Port     int    `json:"port"`
		Replicas int    `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int `json:"replicas"`
	} `json:"status"`
}

type statusObj struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// startConversion serves the Widget CRD (storage v1) converted by a real
// HTTPS webhook.
func startConversion(t *testing.T, tune func(*apiserver.Config)) (*testserver.Server, storage.Store, *crconversiontest.Webhook) {
	t.Helper()
	s, kv := start(t, tune)
	w := crconversiontest.Start(t)
	if code, body, _ := do(t, s, http.MethodPost, crdPath, "application/json", string(w.CRD(convGroup, "v1"))); code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", code, body)
	}
	waitFor(t, "widgets served at v1 and v2", func() bool {
		c1, _, _ := do(t, s, http.MethodGet, convPath("v1", ""), "", "")
		c2, _, _ := do(t, s, http.MethodGet, convPath("v2", ""), "", "")
		return c1 == http.StatusOK && c2 == http.StatusOK
	})
	return s, kv, w
}

// stored reads a Widget as stored.
func stored(t *testing.T, kv storage.Store, name string) widgetObj {
	t.Helper()
	got, err := kv.Get(context.Background(), "/registry/"+convGroup+"/widgets/default/"+name)
	if err != nil {
		t.Fatalf("stored %s: %v", name, err)
	}
	return decode[widgetObj](t, got.Value)
}

func convDo(t *testing.T, s *testserver.Server, method, path, ctype, body string, want int) []byte {
	t.Helper()
	code, got, _ := do(t, s, method, path, ctype, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, got, want)
	}
	return got
}

// TestConversionWebhookServesEveryVersion: reads, lists, writes, patches,
// server-side apply, status, scale and deletes at the version that is not
// stored go through the webhook; the store holds the storage version.
func TestConversionWebhookServesEveryVersion(t *testing.T) {
	s, kv, w := startConversion(t, nil)

	convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
		`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"hostPort":"h:80","replicas":1}}`, http.StatusCreated)
	a := decode[widgetObj](t, convDo(t, s, http.MethodGet, convPath("v2", "a"), "", "", http.StatusOK))
	if a.APIVersion != "conv.example.com/v2" || a.Spec.Host != "h" || a.Spec.Port != 80 || a.Spec.HostPort != "" {
		t.Fatalf("GET v2: %+v", a)
	}

	// A create at v2 is stored at v1 and answered at v2.
	b := decode[widgetObj](t, convDo(t, s, http.MethodPost, convPath("v2", ""), "application/json",
		`{"apiVersion":"conv.example.com/v2","kind":"Widget","metadata":{"name":"b"},"spec":{"host":"x","port":81}}`, http.StatusCreated))
	if b.APIVersion != "conv.example.com/v2" || b.Spec.Host != "x" || b.Spec.Port != 81 {
		t.Fatalf("create answer: %+v", b)
	}
	if st := stored(t, kv, "b"); st.APIVersion != "conv.example.com/v1" || st.Spec.HostPort != "x:81" {
		t.Fatalf("stored: %+v", st)
	}

	// Lists: from the cache, and from storage page by page.
	for _, q := range []string{"", "?limit=1", "?limit=5&resourceVersion=0"} {
		var list struct{ Items []widgetObj }
		list = decode[struct{ Items []widgetObj }](t, convDo(t, s, http.MethodGet, convPath("v2", "")+q, "", "", http.StatusOK))
		for _, it := range list.Items {
			if it.APIVersion != "conv.example.com/v2" || it.Spec.Host == "" {
				t.Fatalf("list%s item: %+v", q, it)
			}
		}
	}

	// Patch, apply, status and scale at v2.
	p := decode[widgetObj](t, convDo(t, s, http.MethodPatch, convPath("v2", "b"), "application/merge-patch+json", `{"spec":{"port":82}}`, http.StatusOK))
	if p.Spec.Port != 82 || stored(t, kv, "b").Spec.HostPort != "x:82" {
		t.Fatalf("patch: %+v, stored %+v", p, stored(t, kv, "b"))
	}
	ap := decode[widgetObj](t, convDo(t, s, http.MethodPatch, convPath("v2", "b")+"?fieldManager=test&force=true", "application/apply-patch+yaml",
		`{"apiVersion":"conv.example.com/v2","kind":"Widget","metadata":{"name":"b"},"spec":{"host":"y","port":83}}`, http.StatusOK))
	if ap.Spec.Host != "y" || stored(t, kv, "b").Spec.HostPort != "y:83" {
		t.Fatalf("apply: %+v, stored %+v", ap, stored(t, kv, "b"))
	}
	convDo(t, s, http.MethodPatch, convPath("v2", "b")+"/status", "application/merge-patch+json", `{"status":{"replicas":2}}`, http.StatusOK)
	if st := stored(t, kv, "b"); st.Status.Replicas != 2 || st.Spec.HostPort != "y:83" {
		t.Fatalf("status write stored %+v", st)
	}
	convDo(t, s, http.MethodPatch, convPath("v2", "b")+"/scale", "application/merge-patch+json", `{"spec":{"replicas":5}}`, http.StatusOK)
	if st := stored(t, kv, "b"); st.Spec.Replicas != 5 {
		t.Fatalf("scale write stored %+v", st)
	}

	// A delete held by a finalizer answers the object at v2.
	convDo(t, s, http.MethodPatch, convPath("v2", "b"), "application/merge-patch+json", `{"metadata":{"finalizers":["example.com/hold"]}}`, http.StatusOK)
	d := decode[widgetObj](t, convDo(t, s, http.MethodDelete, convPath("v2", "b"), "", "", http.StatusOK))
	if d.APIVersion != "conv.example.com/v2" || d.Spec.Host != "y" || d.Metadata.DeletionTimestamp == "" {
		t.Fatalf("delete answer: %+v", d)
	}
	convDo(t, s, http.MethodPatch, convPath("v2", "b"), "application/merge-patch+json", `{"metadata":{"finalizers":null}}`, http.StatusOK)

	// At the storage version nothing needs the webhook: it may be down.
	w.SetMode(crconversiontest.Mode500)
	w.Calls()
	convDo(t, s, http.MethodGet, convPath("v1", "a"), "", "", http.StatusOK)
	convDo(t, s, http.MethodGet, convPath("v1", "")+"?limit=5", "", "", http.StatusOK)
	convDo(t, s, http.MethodPatch, convPath("v1", "a"), "application/merge-patch+json", `{"spec":{"replicas":2}}`, http.StatusOK)
	time.Sleep(200 * time.Millisecond) // the v2 cache converts the event (and fails): not a request's review
	for _, r := range w.Calls() {
		for _, o := range r.Objects {
			if r.Desired != "conv.example.com/v2" {
				t.Fatalf("a request at the storage version sent a review: to %s, %v", r.Desired, o["metadata"])
			}
		}
	}
}

// TestConversionWebhookFailures: a webhook that answers 500, garbage, the
// wrong uid or nothing gives kube-apiserver's errors, and a refused write
// leaves the store unchanged.
func TestConversionWebhookFailures(t *testing.T) {
	s, kv, w := startConversion(t, func(c *apiserver.Config) { c.RequestTimeout = 3 * time.Second })
	created := decode[widgetObj](t, convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
		`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"hostPort":"h:80"}}`, http.StatusCreated))
	rv := created.Metadata.ResourceVersion
	readPrefix := "Internal error occurred: StorageError: corrupt object, Code: 7, Key: /conv.example.com/widgets/default/a, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=" + rv +
		": conversion webhook for conv.example.com/v1, Kind=Widget failed: "
	writePrefix := "conversion webhook for conv.example.com/v2, Kind=Widget failed: "
	for _, tc := range []struct {
		mode, cause string
	}{
		{crconversiontest.Mode500, `an error on the server ("conversion is broken") has prevented the request from succeeding`},
		{crconversiontest.ModeGarbage, `couldn't get version/kind; json parse error: `},
		{crconversiontest.ModeWrongUID, `expected response.uid=`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			w.SetMode(tc.mode)
			st := decode[statusObj](t, convDo(t, s, http.MethodGet, convPath("v2", "a"), "", "", http.StatusInternalServerError))
			if st.Reason != "InternalError" || !strings.HasPrefix(st.Message, readPrefix+tc.cause) {
				t.Fatalf("GET: %+v\nwant InternalError %q", st, readPrefix+tc.cause)
			}
			st = decode[statusObj](t, convDo(t, s, http.MethodPost, convPath("v2", ""), "application/json",
				`{"apiVersion":"conv.example.com/v2","kind":"Widget","metadata":{"name":"c"},"spec":{"host":"x","port":1}}`, http.StatusInternalServerError))
			if st.Reason != "" || !strings.HasPrefix(st.Message, writePrefix+tc.cause) {
				t.Fatalf("POST: %+v\nwant no reason, %q", st, writePrefix+tc.cause)
			}
			if _, err := kv.Get(context.Background(), "/registry/"+convGroup+"/widgets/default/c"); err == nil {
				t.Fatal("a refused create was stored")
			}
			if got := stored(t, kv, "a"); got.Metadata.ResourceVersion != "" || got.Spec.HostPort != "h:80" {
				t.Fatalf("stored a changed: %+v", got)
			}
		})
	}
	w.SetMode(crconversiontest.ModeHang)
	start := time.Now()
	st := decode[statusObj](t, convDo(t, s, http.MethodGet, convPath("v2", "a"), "", "", http.StatusGatewayTimeout))
	if st.Reason != "Timeout" || st.Message != "Timeout: request did not complete within the allotted timeout" {
		t.Fatalf("hang: %+v after %v", st, time.Since(start))
	}
	w.SetMode(crconversiontest.ModeGood)
	convDo(t, s, http.MethodGet, convPath("v2", "a"), "", "", http.StatusOK)
}

// TestConversionWebhookWatch: watch events at v2 are converted; an event
// the webhook fails to convert ends the watch with an ERROR event.
func TestConversionWebhookWatch(t *testing.T) {
	s, _, w := startConversion(t, nil)
	req, err := http.NewRequest(http.MethodGet, s.URL+convPath("v2", "")+"?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	nextEvent := func() (string, json.RawMessage) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("watch ended: %v", lines.Err())
		}
		var ev watchEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil || ev.Type == "" {
			t.Fatalf("watch line %q: %v", lines.Bytes(), err)
		}
		return ev.Type, ev.Object
	}
	convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
		`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"hostPort":"h:80"}}`, http.StatusCreated)
	typ, obj := nextEvent()
	if got := decode[widgetObj](t, obj); typ != "ADDED" || got.APIVersion != "conv.example.com/v2" || got.Spec.Host != "h" {
		t.Fatalf("event %s %s", typ, obj)
	}
	w.SetMode(crconversiontest.Mode500)
	convDo(t, s, http.MethodPatch, convPath("v1", "a"), "application/merge-patch+json", `{"spec":{"replicas":3}}`, http.StatusOK)
	typ, obj = nextEvent()
	st := decode[statusObj](t, obj)
	if typ != "ERROR" || st.Code != http.StatusInternalServerError || !strings.Contains(st.Message, "conversion webhook for conv.example.com/v1, Kind=Widget failed") {
		t.Fatalf("event %s %s, want an ERROR with the conversion failure", typ, obj)
	}
	if lines.Scan() {
		t.Fatalf("the watch went on after its ERROR: %s", lines.Bytes())
	}
	// Once the webhook works again the version's cache catches up.
	w.SetMode(crconversiontest.ModeGood)
	waitFor(t, "v2 list shows the update", func() bool {
		code, body, _ := do(t, s, http.MethodGet, convPath("v2", "a")+"?resourceVersion=0", "", "")
		return code == http.StatusOK && decode[widgetObj](t, body).Spec.Replicas == 3
	})
}

// TestStorageVersionMigration: after the storage version moves to v2,
// objects stored at v1 stay readable at both versions, writes store v2,
// and status.storedVersions lists both.
func TestStorageVersionMigration(t *testing.T) {
	s, kv, w := startConversion(t, nil)
	convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
		`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"name":"old"},"spec":{"hostPort":"h:80"}}`, http.StatusCreated)
	waitFor(t, "the CRD updated to store v2", func() bool {
		crd := decode[map[string]any](t, convDo(t, s, http.MethodGet, crdPath+"/widgets."+convGroup, "", "", http.StatusOK))
		next := decode[map[string]any](t, w.CRD(convGroup, "v2"))
		next["metadata"] = crd["metadata"]
		body, err := json.Marshal(next)
		if err != nil {
			t.Fatal(err)
		}
		code, got, _ := do(t, s, http.MethodPut, crdPath+"/widgets."+convGroup, "application/json", string(body))
		if code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("update CRD: %d %s", code, got)
		}
		return code == http.StatusOK
	})
	waitFor(t, "storedVersions [v1 v2]", func() bool {
		c := decode[crdObj](t, convDo(t, s, http.MethodGet, crdPath+"/widgets."+convGroup, "", "", http.StatusOK))
		return strings.Join(c.Status.StoredVersions, ",") == "v1,v2"
	})
	waitFor(t, "v1 writes stored at v2", func() bool {
		probe := decode[widgetObj](t, convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
			`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"generateName":"probe-"},"spec":{"hostPort":"p:1"}}`, http.StatusCreated))
		return stored(t, kv, probe.Metadata.Name).APIVersion == "conv.example.com/v2"
	})
	if st := stored(t, kv, "old"); st.APIVersion != "conv.example.com/v1" {
		t.Fatalf("old object rewritten by the change of storage version: %+v", st)
	}
	for _, v := range []string{"v1", "v2"} {
		got := decode[widgetObj](t, convDo(t, s, http.MethodGet, convPath(v, "old"), "", "", http.StatusOK))
		if got.APIVersion != "conv.example.com/"+v || (v == "v1" && got.Spec.HostPort != "h:80") || (v == "v2" && got.Spec.Host != "h") {
			t.Fatalf("old object at %s: %+v", v, got)
		}
	}
	convDo(t, s, http.MethodPatch, convPath("v1", "old"), "application/merge-patch+json", `{"spec":{"hostPort":"h:81"}}`, http.StatusOK)
	if st := stored(t, kv, "old"); st.APIVersion != "conv.example.com/v2" || st.Spec.Host != "h" || st.Spec.Port != 81 {
		t.Fatalf("rewritten object stored as %+v, want v2", st)
	}
}

// TestConversionWebhookServiceReference: a conversion webhook named by a
// Service reference is reached through the Service's EndpointSlice (a
// process on the host, as envtest users run theirs), its certificate
// verified for <name>.<namespace>.svc; the Service's port defaults to 443.
func TestConversionWebhookServiceReference(t *testing.T) {
	s, _ := start(t, nil)
	host := webhooktest.HostIP(t)
	w := crconversiontest.StartOn(t, host, "converter.default.svc")
	convDo(t, s, http.MethodPost, "/api/v1/namespaces/default/services", "application/json",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"converter"},"spec":{"ports":[{"name":"https","port":443,"targetPort":`+
			strconv.Itoa(int(w.Port))+`}]}}`, http.StatusCreated)
	convDo(t, s, http.MethodPost, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", "application/json",
		`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"converter-1","labels":{"kubernetes.io/service-name":"converter"}},
		 "addressType":"IPv4","endpoints":[{"addresses":["`+host+`"],"conditions":{"ready":true}}],"ports":[{"name":"https","port":`+strconv.Itoa(int(w.Port))+`}]}`,
		http.StatusCreated)
	crd := decode[map[string]any](t, convDo(t, s, http.MethodPost, crdPath, "application/json", string(w.ServiceCRD(convGroup, "v1", "default", "converter")), http.StatusCreated))
	port, _, _ := unstructuredNested(crd, "spec", "conversion", "webhook", "clientConfig", "service", "port")
	if port != float64(443) {
		t.Fatalf("service port defaulted to %v, want 443", port)
	}
	waitFor(t, "widgets served at v2", func() bool {
		code, _, _ := do(t, s, http.MethodGet, convPath("v2", ""), "", "")
		return code == http.StatusOK
	})
	convDo(t, s, http.MethodPost, convPath("v1", ""), "application/json",
		`{"apiVersion":"conv.example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"hostPort":"h:80"}}`, http.StatusCreated)
	got := decode[widgetObj](t, convDo(t, s, http.MethodGet, convPath("v2", "a"), "", "", http.StatusOK))
	if got.Spec.Host != "h" || got.Spec.Port != 80 {
		t.Fatalf("GET v2 through the Service: %+v", got)
	}
}

// unstructuredNested reads a value of decoded JSON.
func unstructuredNested(m map[string]any, path ...string) (any, bool, error) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = mm[p]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}
