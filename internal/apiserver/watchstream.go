package apiserver

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// watchChunk is how many bytes of frames a watch response gathers before
// it writes them to the connection while more frames are queued. Go's
// HTTP/2 server hands every Write of at most 4 KiB (its handler buffer) to
// the connection's serving goroutine as one DATA frame and waits for it to
// be written: frame by frame, a streaming list of 10,000 objects costs
// thousands of goroutine hand-offs, TLS records and write system calls. A
// larger Write goes out as DATA frames of the peer's maximum size, written
// back to back. Over HTTP/1.1 it is one chunk.
const watchChunk = 64 << 10

// watchWriters pools what a watch response holds only while it has bytes
// to send: the chunk buffer and, for a compressed stream, the gzip
// writer (level 1, with its compressor's tables). An idle watch holds
// neither, so thousands of open watches cost no buffers.
type watchWriters struct {
	bufs sync.Pool // *bytes.Buffer
	gzip sync.Pool // *gzip.Writer
}

func (p *watchWriters) buffer() *bytes.Buffer {
	if b, ok := p.bufs.Get().(*bytes.Buffer); ok {
		return b
	}
	return bytes.NewBuffer(make([]byte, 0, watchChunk+watchChunk/4))
}

func (p *watchWriters) gzipWriter(dst *bytes.Buffer) *gzip.Writer {
	if zw, ok := p.gzip.Get().(*gzip.Writer); ok {
		zw.Reset(dst)
		return zw
	}
	zw, _ := gzip.NewWriterLevel(dst, gzip.BestSpeed) // a valid level: no error
	return zw
}

// watchStream writes a watch response's frames: it gathers them into
// chunks of about watchChunk bytes and writes a chunk when it is full or
// when the caller flushes (the watcher's queue is momentarily empty), so a
// burst of frames (a streaming list's initial events, a catching-up
// watcher) becomes few large writes while a single live event still goes
// out at once.
//
// A compressed stream (see acceptsGzip) is gzip, as kube-apiserver's: each
// flush ends a gzip member, and the next frame starts a new one; a client
// reads the concatenated members as one stream (RFC 1952, 2.2).
type watchStream struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	pools *watchWriters
	gzip  bool
	buf   *bytes.Buffer // nil when nothing is pending
	zw    *gzip.Writer  // nil outside a gzip member
}

func newWatchStream(w http.ResponseWriter, pools *watchWriters, gzip bool) *watchStream {
	return &watchStream{w: w, rc: http.NewResponseController(w), pools: pools, gzip: gzip}
}

// Write adds one frame; it writes to the connection only when a chunk is
// full.
func (s *watchStream) Write(frame []byte) error {
	if s.buf == nil {
		s.buf = s.pools.buffer()
	}
	if s.gzip {
		if s.zw == nil {
			s.zw = s.pools.gzipWriter(s.buf)
		}
		if _, err := s.zw.Write(frame); err != nil {
			return err
		}
	} else {
		s.buf.Write(frame)
	}
	if s.buf.Len() >= watchChunk {
		return s.writeBuffered()
	}
	return nil
}

// Flush ends the gzip member, writes what is pending and flushes the
// connection, then gives the buffers back.
func (s *watchStream) Flush() error {
	if s.zw != nil {
		// Flush, then Close: the member's data ends in a non-final block,
		// so a reader returns it before it reaches the member's end (Go's
		// gzip.Reader returns the data of a final block only once it has
		// read the next member's header, which comes with the next flush).
		err := s.zw.Flush()
		if err == nil {
			err = s.zw.Close()
		}
		s.zw.Reset(nil)
		s.pools.gzip.Put(s.zw)
		s.zw = nil
		if err != nil {
			return err
		}
	}
	if err := s.writeBuffered(); err != nil {
		return err
	}
	if s.buf != nil {
		s.pools.bufs.Put(s.buf)
		s.buf = nil
	}
	return s.rc.Flush()
}

// Close gives the buffers back without writing (the watch has ended).
func (s *watchStream) Close() {
	if s.zw != nil {
		s.zw.Reset(nil)
		s.pools.gzip.Put(s.zw)
		s.zw = nil
	}
	if s.buf != nil {
		s.buf.Reset()
		s.pools.bufs.Put(s.buf)
		s.buf = nil
	}
}

func (s *watchStream) writeBuffered() error {
	if s.buf == nil || s.buf.Len() == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	return err
}

// acceptsGzip tells whether a watch response is gzip-compressed. As
// kube-apiserver v1.37 does (its WatchListCompression feature, on by
// default), only a streaming list (sendInitialEvents=true) is, and only
// for a client whose Accept-Encoding lists gzip (Go's HTTP transport,
// hence client-go, sends it by default); plain watches never are.
func acceptsGzip(r *http.Request, streamingList bool) bool {
	if !streamingList {
		return false
	}
	for _, token := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}
