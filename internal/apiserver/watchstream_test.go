package apiserver_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// streamingList is the query of client-go's streaming list.
const streamingList = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"

// createPayloadCMs creates n ConfigMaps of about 1 KiB each in default.
func createPayloadCMs(t *testing.T, s *testserver.Server, n int) {
	t.Helper()
	payload := strings.Repeat("x", 1024)
	for i := range n {
		createCM(t, s, "cm-"+strconv.Itoa(i), map[string]string{"payload": payload})
	}
}

// TestStreamingListFramesOverHTTP2 reads a streaming list of 300 objects
// frame by frame over HTTP/2 and checks that the server coalesces its
// events into large DATA frames. Go's HTTP/2 server turns every response
// Write of at most 4 KiB into one DATA frame, handed to the connection's
// goroutine and written on its own (a round trip and a system call per
// frame); writing event by event made every DATA frame of a streaming list
// 4 KiB and made an HTTP/2 client's initial sync several times slower than
// kube-apiserver's.
func TestStreamingListFramesOverHTTP2(t *testing.T) {
	s, _ := start(t, nil)
	const n = 300 // fewer than half the watcher buffer: all queued at once
	createPayloadCMs(t, s, n)

	frames, body := h2Get(t, s, cmPath+streamingList, func(body []byte) bool {
		return bytes.Contains(body, []byte(`{"type":"BOOKMARK"`))
	})
	added := bytes.Count(body, []byte(`{"type":"ADDED"`))
	if added != n {
		t.Fatalf("%d ADDED events before the bookmark, want %d", added, n)
	}
	// The client allows 16 KiB frames; 8 KiB on average leaves room for
	// the frames that end a write.
	if limit := len(body)/(8<<10) + 2; frames > limit {
		t.Errorf("%d bytes came in %d DATA frames (%d bytes each on average), want at most %d",
			len(body), frames, len(body)/frames, limit)
	}
}

// h2Get sends one GET over a new HTTP/2 connection, speaking the protocol
// frame by frame, and reads the response's DATA frames until done says
// the body read so far is complete. It returns the number of DATA frames
// and the body.
func h2Get(t *testing.T, s *testserver.Server, path string, done func(body []byte) bool) (int, []byte) {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := s.Client.Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsCfg.NextProtos = []string{http2.NextProtoTLS}
	conn, err := tls.Dial("tcp", u.Host, tlsCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	// Large windows, so that flow control does not cut the frames.
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteWindowUpdate(0, 1<<30); err != nil {
		t.Fatal(err)
	}
	var hdr bytes.Buffer
	enc := hpack.NewEncoder(&hdr)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", u.Host}, {":path", path},
		{"authorization", "Bearer " + s.Token}, {"accept", "application/json"}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hdr.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	var body []byte
	frames := 0
	for !done(body) {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %d DATA frames (%d bytes): %v", frames, len(body), err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					t.Fatal(err)
				}
			}
		case *http2.DataFrame:
			if f.StreamID == 1 && len(f.Data()) > 0 {
				frames++
				body = append(body, f.Data()...)
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			t.Fatalf("the server ended the stream: %v", f)
		}
	}
	return frames, body
}

// TestStreamingListGzip checks the compression of watch responses, as
// kube-apiserver v1.37 does it: a streaming list is gzip for a client that
// accepts gzip, and the stream stays valid gzip across flushes (each flush
// ends a gzip member) with later events; a plain watch, or a client
// that does not accept gzip, gets the stream uncompressed.
func TestStreamingListGzip(t *testing.T) {
	s, _ := start(t, nil)
	const n = 5
	createPayloadCMs(t, s, n)

	t.Run("streaming list, gzip accepted", func(t *testing.T) {
		resp := rawWatch(t, s, cmPath+streamingList, "gzip")
		if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", got)
		}
		if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
			t.Errorf("Vary %q, want Accept-Encoding", got)
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(zr)
		lines.Buffer(nil, 1<<20)
		for i := range n {
			if typ := nextType(t, lines); typ != "ADDED" {
				t.Fatalf("event %d is %s, want ADDED", i, typ)
			}
		}
		if typ := nextType(t, lines); typ != "BOOKMARK" {
			t.Fatalf("after the initial events: %s, want BOOKMARK", typ)
		}
		// A live event after the flush arrives in a new gzip member.
		createCM(t, s, "later", map[string]string{"k": "v"})
		if typ := nextType(t, lines); typ != "ADDED" {
			t.Fatalf("live event: %s, want ADDED", typ)
		}
	})
	for _, c := range []struct{ name, path, acceptEncoding string }{
		{"plain watch, gzip accepted", cmPath + "?watch=1", "gzip"},
		{"streaming list, gzip not accepted", cmPath + streamingList, ""},
		{"streaming list, identity only", cmPath + streamingList, "identity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := rawWatch(t, s, c.path, c.acceptEncoding)
			if got := resp.Header.Get("Content-Encoding"); got != "" {
				t.Fatalf("Content-Encoding %q, want none", got)
			}
			lines := bufio.NewScanner(resp.Body)
			lines.Buffer(nil, 1<<20)
			if typ := nextType(t, lines); typ != "ADDED" {
				t.Fatalf("first event %s, want ADDED", typ)
			}
		})
	}
}

// rawWatch opens a watch whose body the transport leaves as it is sent:
// compression is off in the transport, which then neither adds
// Accept-Encoding nor decompresses; acceptEncoding, when set, is sent.
func rawWatch(t *testing.T, s *testserver.Server, path, acceptEncoding string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	tr := s.Client.Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch %s: %s %s", path, resp.Status, b)
	}
	return resp
}

func nextType(t *testing.T, lines *bufio.Scanner) string {
	t.Helper()
	if !lines.Scan() {
		t.Fatalf("stream ended: %v", lines.Err())
	}
	var ev watchEvent
	if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
		t.Fatalf("decode %q: %v", lines.Bytes(), err)
	}
	return ev.Type
}
