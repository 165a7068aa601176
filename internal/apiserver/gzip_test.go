package apiserver_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A response over 128 KiB is gzipped when the client accepts gzip, as
// kube-apiserver does; a smaller one, or a client that does not ask, gets
// the plain body with its Content-Length.
func TestLargeResponsesGzipped(t *testing.T) {
	s, _ := start(t, nil)
	big := strings.Repeat("x", 1024)
	for i := range 160 {
		createCM(t, s, "gz-"+itoa(int64(i)), map[string]string{"payload": big})
	}
	get := func(path, acceptEncoding string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.Token)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding) // set by hand: the transport does not decompress
		}
		resp, err := s.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	plainResp, plain := get(cmPath, "identity")
	if plainResp.StatusCode != http.StatusOK || plainResp.Header.Get("Content-Encoding") != "" ||
		plainResp.Header.Get("Content-Length") != itoa(int64(len(plain))) || len(plain) <= 128*1024 {
		t.Fatalf("plain list: %d %v (%d bytes)", plainResp.StatusCode, plainResp.Header, len(plain))
	}
	resp, zipped := get(cmPath, "deflate, gzip")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" ||
		resp.Header.Get("Vary") != "Accept-Encoding" || resp.Header.Get("Content-Length") != "" || len(zipped) >= len(plain)/4 {
		t.Fatalf("gzipped list: %d %v (%d bytes)", resp.StatusCode, resp.Header, len(zipped))
	}
	zr, err := gzip.NewReader(strings.NewReader(string(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	l := decode[list](t, unzipped)
	if len(l.Items) != 160 || l.Items[0].Data["payload"] != big {
		t.Fatalf("gzipped list decodes to %d items", len(l.Items))
	}
	// Small: not compressed even when asked.
	small, b := get(cmPath+"/gz-1", "gzip")
	if small.Header.Get("Content-Encoding") != "" || small.Header.Get("Content-Length") != itoa(int64(len(b))) {
		t.Fatalf("small object: %v", small.Header)
	}
}
