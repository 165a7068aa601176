package reftest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// Run replays the cases of file (a path relative to the test's package,
// normally testdata/reference.json) on one fresh test server, or, with
// Env set, records them from the reference and rewrites the file.
func Run(t *testing.T, file string) {
	t.Helper()
	f, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if kc := os.Getenv(Env); kc != "" {
		Reference(t, kc).Record(t, file, f)
		return
	}
	s := Start(t, testserver.Options{})
	for _, ns := range f.Namespaces {
		s.createNamespace(t, ns)
	}
	s.Replay(t, f.Cases)
}

// Replay sends the cases in order, each as a subtest, and compares every
// answer with the case's Want; after a refused write to a test server, the
// collection it addressed must be unchanged.
func (s *Server) Replay(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Want == nil {
				t.Fatalf("no recorded answer (record it with %s)", Env)
			}
			s.setup(t, c)
			// The reference's controllers write all the time: the store is
			// checked on setpoint's server only.
			list := ""
			if c.Method != http.MethodGet && s.Test != nil {
				list = collectionPath(c.Path)
			}
			before := s.snapshot(t, list)
			got := s.answer(t, c)
			compare(t, c, got)
			if got.Code >= 400 && before != "" {
				if after := s.snapshot(t, list); after != before {
					t.Errorf("a refused %s changed %s:\nbefore %s\nafter  %s", c.Method, list, before, after)
				}
			}
		})
	}
}

// Record runs the cases on s (the reference) and writes their answers
// into file.
func (s *Server) Record(t *testing.T, file string, f *File) {
	t.Helper()
	s.clean(t, f)
	for _, ns := range f.Namespaces {
		s.createNamespace(t, ns)
	}
	defer s.clean(t, f)
	for i := range f.Cases {
		c := &f.Cases[i]
		s.setup(t, *c)
		a := s.answer(t, *c)
		c.Want = &a
	}
	if err := f.Save(file); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d cases into %s", len(f.Cases), file)
}

func (s *Server) setup(t *testing.T, c Case) {
	t.Helper()
	for _, r := range c.Setup {
		if code, out, _ := s.send(t, r); code >= 300 {
			t.Fatalf("setup %s %s: %d %s", r.Method, r.Path, code, out)
		}
	}
}

// answer sends a case's request and returns its normalized answer, with
// the written object's Table when the case asks for it.
func (s *Server) answer(t *testing.T, c Case) Answer {
	t.Helper()
	code, out, h := s.send(t, c.Request)
	a := Answer{Code: code, Warnings: h.Values("Warning")}
	var body any
	if err := json.Unmarshal(out, &body); err != nil {
		body = string(out)
	}
	uids := ownUIDs(body)
	a.Body = normalize(body, uids, c.Ignore)
	if !c.Table || code >= 300 {
		return a
	}
	name, _ := dig(body, "metadata", "name").(string)
	p := collectionPath(c.Path) + "/" + name
	tcode, tout, _ := s.raw(t, http.MethodGet, p, "", tableMediaType, nil)
	if tcode != http.StatusOK {
		t.Fatalf("table of %s: %d %s", p, tcode, tout)
	}
	var tbl any
	if err := json.Unmarshal(tout, &tbl); err != nil {
		t.Fatalf("table of %s: %v", p, err)
	}
	a.Table = normalize(tbl, uids, c.Ignore)
	return a
}

const tableMediaType = "application/json;as=Table;v=v1;g=meta.k8s.io"

func (s *Server) createNamespace(t *testing.T, ns string) {
	t.Helper()
	code, out, _ := s.raw(t, http.MethodPost, "/api/v1/namespaces", "application/json", "",
		[]byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)))
	if code != http.StatusCreated {
		t.Fatalf("create namespace %s: %d %s", ns, code, out)
	}
}

// clean deletes the File's cluster-scoped objects and namespaces from
// the reference and waits until they are gone.
func (s *Server) clean(t *testing.T, f *File) {
	t.Helper()
	paths := append([]string{}, f.Cleanup...)
	for _, ns := range f.Namespaces {
		paths = append(paths, "/api/v1/namespaces/"+ns)
	}
	for _, p := range paths {
		s.raw(t, http.MethodDelete, p, "application/json", "", []byte(`{"propagationPolicy":"Background"}`))
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range paths {
		for {
			code, out, _ := s.raw(t, http.MethodGet, p, "", "", nil)
			if code == http.StatusNotFound {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still there: %d %s", p, code, strings.TrimSpace(string(out)))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// Target is where a test's Go-built cases run: with Env set, the
// reference (so that their Want are checked against kube-apiserver; there
// is no file to record into), else a fresh test server.
func Target(t *testing.T) *Server {
	t.Helper()
	if kc := os.Getenv(Env); kc != "" {
		return Reference(t, kc)
	}
	return Start(t, testserver.Options{})
}

// Refusal is the Want of a Go-built case that the server refuses with
// err (as apierrors.NewInvalid, NewForbidden and their kin make it): the
// Status kube-apiserver writes.
func Refusal(err *apierrors.StatusError) *Answer {
	st := err.ErrStatus
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return &Answer{Code: int(st.Code), Body: &st}
}
