package openapi_test

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/discovery/discoverytest"
)

// TestV3EncodedOnFirstRequests: the v3 documents, encoded on first use,
// come out whole and identical to every one of many concurrent first
// requests, also after an Update that found nothing encoded to reuse; the
// index names each document's hash, which is its ETag.
func TestV3EncodedOnFirstRequests(t *testing.T) {
	s, srv := newOpenAPIServer(t)
	if err := s.Update(discoverytest.Resources()); err != nil {
		t.Fatal(err)
	}
	const n = 8
	type answer struct {
		code       int
		etag, body string
		err        error
	}
	answers := make([][2]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for j, path := range []string{"/openapi/v3", "/openapi/v3/api/v1"} {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					answers[i][j] = answer{err: err}
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				answers[i][j] = answer{code: resp.StatusCode, etag: resp.Header.Get("ETag"), body: string(body), err: err}
			}
		})
	}
	wg.Wait()
	for i, a := range answers {
		for j := range a {
			if a[j].err != nil || a[j].code != http.StatusOK || a[j].body != answers[0][j].body || a[j].etag != answers[0][j].etag {
				t.Fatalf("request %d/%d: %d %v (ETag %s, %d bytes; first %s, %d bytes)", i, j, a[j].code, a[j].err,
					a[j].etag, len(a[j].body), answers[0][j].etag, len(answers[0][j].body))
			}
		}
	}
	urls := v3URLs(t, srv)
	if want := "/openapi/v3/api/v1?hash=" + mustUnquote(t, answers[0][1].etag); urls["api/v1"] != want {
		t.Errorf("index names %s, the document's ETag gives %s", urls["api/v1"], want)
	}
}

func mustUnquote(t *testing.T, s string) string {
	t.Helper()
	u, err := strconv.Unquote(s)
	if err != nil {
		t.Fatalf("ETag %q: %v", s, err)
	}
	return u
}
