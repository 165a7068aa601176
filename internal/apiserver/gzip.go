package apiserver

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// As kube-apiserver (APIResponseCompression, on by default): a response
// body larger than 128 KiB is gzipped, at level 1 (least CPU for nearly
// the ratio of higher levels), when the client accepts gzip. Go clients,
// client-go among them, ask for it by default, and a list of thousands of
// objects shrinks several times on the wire.
const (
	gzipThresholdBytes = 128 * 1024
	gzipLevel          = 1
)

// acceptsGzip reports whether Accept-Encoding names gzip, read as
// kube-apiserver reads it: comma-separated tokens, no quality values.
func acceptsGzip(r *http.Request) bool {
	for tok := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}

// gzipWriters reuses gzip writers (each holds about a megabyte of
// compressor state).
type gzipWriters struct{ pool sync.Pool }

// writeGzip sends body gzipped with status code; the caller has set the
// other headers but Content-Length.
func (g *gzipWriters) writeGzip(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	w.WriteHeader(code)
	zw, _ := g.pool.Get().(*gzip.Writer)
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(w, gzipLevel) // the level is valid
	} else {
		zw.Reset(w)
	}
	_, _ = zw.Write(body)
	_ = zw.Close()
	zw.Reset(nil)
	g.pool.Put(zw)
}
