package reftest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// RecordEnv names the environment variable that switches Run to recording.
const RecordEnv = "SETPOINT_REFERENCE_KUBECONFIG"

// File is the content of a testdata/reference.json.
type File struct {
	// Namespaces are created before the cases run (and deleted after
	// recording).
	Namespaces []string `json:"namespaces,omitempty"`
	// Cleanup are paths deleted before and after recording (cluster-scoped
	// objects the cases create), so that a recording starts clean.
	Cleanup []string `json:"cleanup,omitempty"`
	Cases   []Case   `json:"cases"`
}

// Case is one request and kube-apiserver's answer to it.
type Case struct {
	Name   string          `json:"name"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
	// ContentType defaults to application/json (merge-patch for PATCH).
	ContentType string `json:"contentType,omitempty"`
	// Accept defaults to application/json.
	Accept string `json:"accept,omitempty"`
	// Ignore lists further dotted paths of the answer that differ between
	// servers and are not compared ("metadata.name" of generated names).
	Ignore []string `json:"ignore,omitempty"`
	Want   *Answer  `json:"want,omitempty"`
}

// Answer is a recorded response: the status code and the normalized body.
type Answer struct {
	Code int `json:"code"`
	Body any `json:"body,omitempty"`
}

// target is a server the cases are sent to.
type target struct {
	base   string
	token  string
	client *http.Client
}

// Run replays the cases of file (a path relative to the test's package)
// against a fresh test server, or records them from the reference when
// RecordEnv is set.
func Run(t *testing.T, file string) {
	t.Helper()
	f := load(t, file)
	if kc := os.Getenv(RecordEnv); kc != "" {
		record(t, file, f, referenceTarget(t, kc))
		return
	}
	s := testserver.Start(t, testserver.Options{})
	replay(t, f, &target{base: s.URL, token: s.Token, client: s.Client})
}

func load(t *testing.T, file string) *File {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &f
}

func referenceTarget(t *testing.T, kubeconfig string) *target {
	t.Helper()
	cfg, err := rest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.TLS.CAData)
	return &target{base: cfg.Host, token: cfg.BearerToken, client: &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
}

func replay(t *testing.T, f *File, tg *target) {
	t.Helper()
	for _, ns := range f.Namespaces {
		tg.mustCreateNamespace(t, ns)
	}
	for _, c := range f.Cases {
		if c.Want == nil {
			t.Fatalf("%s: no recorded answer (record with %s)", c.Name, RecordEnv)
		}
		before := tg.collection(t, c)
		got := tg.send(t, c)
		if !reflect.DeepEqual(got.Body, c.Want.Body) || got.Code != c.Want.Code {
			t.Errorf("%s: %s %s\n got %d %s\nwant %d %s", c.Name, c.Method, c.Path,
				got.Code, compact(got.Body), c.Want.Code, compact(c.Want.Body))
		}
		if c.Want.Code >= 400 && before != nil {
			if after := tg.collection(t, c); !reflect.DeepEqual(before, after) {
				t.Errorf("%s: a rejected %s changed %s:\n before %v\n  after %v", c.Name, c.Method, collectionPath(c), before, after)
			}
		}
	}
}

func record(t *testing.T, file string, f *File, tg *target) {
	t.Helper()
	for _, p := range f.Cleanup {
		tg.do(t, http.MethodDelete, p, "", "", nil)
	}
	for _, ns := range f.Namespaces {
		tg.mustCreateNamespace(t, ns)
	}
	for i := range f.Cases {
		a := tg.send(t, f.Cases[i])
		f.Cases[i].Want = &a
	}
	for _, p := range f.Cleanup {
		tg.do(t, http.MethodDelete, p, "", "", nil)
	}
	for _, ns := range f.Namespaces {
		tg.do(t, http.MethodDelete, "/api/v1/namespaces/"+ns, "", "", nil)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d cases into %s", len(f.Cases), file)
}

func (tg *target) mustCreateNamespace(t *testing.T, ns string) {
	t.Helper()
	code, body := tg.do(t, http.MethodPost, "/api/v1/namespaces", "application/json", "",
		[]byte(fmt.Sprintf(`{"metadata":{"name":%q}}`, ns)))
	if code != http.StatusCreated && code != http.StatusConflict {
		t.Fatalf("create namespace %s: %d %s", ns, code, body)
	}
}

// send performs a case's request and returns its normalized answer.
func (tg *target) send(t *testing.T, c Case) Answer {
	t.Helper()
	ctype := c.ContentType
	switch {
	case ctype != "":
	case c.Method == http.MethodPatch:
		ctype = "application/merge-patch+json"
	case len(c.Body) > 0:
		ctype = "application/json"
	}
	code, body := tg.do(t, c.Method, c.Path, ctype, c.Accept, c.Body)
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		v = string(body)
	}
	return Answer{Code: code, Body: normalize(v, c.Ignore)}
}

func (tg *target) do(t *testing.T, method, path, ctype, accept string, body []byte) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, tg.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tg.token)
	req.Header.Set("User-Agent", "reftest")
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// collectionPath is the collection a case's request writes to: the path
// itself for a POST, else the path without the object's name (and
// subresource).
func collectionPath(c Case) string {
	p := strings.SplitN(c.Path, "?", 2)[0]
	if c.Method == http.MethodPost {
		return p
	}
	parts := strings.Split(strings.TrimSuffix(p, "/"), "/")
	if n := len(parts); n > 2 && (parts[n-1] == "status" || parts[n-1] == "finalize") {
		parts = parts[:n-1]
	}
	return strings.Join(parts[:len(parts)-1], "/")
}

// collection returns the list resourceVersion and the (name,
// resourceVersion) of every item of the case's collection, nil for reads.
func (tg *target) collection(t *testing.T, c Case) []string {
	t.Helper()
	if c.Method == http.MethodGet {
		return nil
	}
	code, body := tg.do(t, http.MethodGet, collectionPath(c), "", "", nil)
	if code != http.StatusOK {
		return nil
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name, ResourceVersion string
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("list %s: %v", collectionPath(c), err)
	}
	out := []string{list.Metadata.ResourceVersion}
	for _, it := range list.Items {
		out = append(out, it.Metadata.Name+"@"+it.Metadata.ResourceVersion)
	}
	return out
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
