package openapi

import (
	"sync"
	"sync/atomic"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Encoding the v3 documents is most of the cost of building a Service (a
// third of an API server's start-up under the race detector), and most
// servers (every test server, a cluster nobody runs kubectl explain
// against) never serve them. So a v3Set derives its definitions at once
// (Schemas feeds server-side apply) and encodes its documents on first
// use, once: the first /openapi/v3 request, or SetAggregated.

// v3Set is the rendered OpenAPI v3 documents of a plan. docs, byKey and
// discovery are valid only after ready returned nil.
type v3Set struct {
	// docs maps a group-version path ("api/v1", "apis/apps/v1") to its
	// document.
	docs map[string]document
	// byKey holds every group-version document under its reuse key
	// (reuse.go).
	byKey map[string]document
	// discovery is the /openapi/v3 body naming each document's URL.
	discovery document
	// schemas holds every definition, OpenAPI v3 style.
	schemas map[string]*spec.Schema

	once    sync.Once
	pending []pendingDoc
	err     error
	encoded atomic.Bool
}

// pendingDoc is one document of a v3Set before encoding: value to encode,
// or doc reused from the previous set.
type pendingDoc struct {
	path   string
	key    string // reuse key; "" for the documents that are no group-version
	value  any
	doc    document
	reused bool
}

func newV3Set(schemas map[string]*spec.Schema, pending []pendingDoc) *v3Set {
	return &v3Set{schemas: schemas, pending: pending}
}

// encodedV3Set is a set whose documents are already encoded.
func encodedV3Set(schemas map[string]*spec.Schema, docs, byKey map[string]document, discovery document) *v3Set {
	s := &v3Set{schemas: schemas, docs: docs, byKey: byKey, discovery: discovery}
	s.once.Do(func() {})
	s.encoded.Store(true)
	return s
}

// ready encodes the documents on its first call and returns the encoding
// error, if any, on every call.
func (s *v3Set) ready() error {
	s.once.Do(func() {
		s.err = s.encode()
		s.pending = nil
		if s.err == nil {
			s.encoded.Store(true)
		}
	})
	return s.err
}

func (s *v3Set) encode() error {
	s.docs, s.byKey = map[string]document{}, map[string]document{}
	disco := discoveryV3{Paths: map[string]discoveryV3Entry{}}
	for _, d := range s.pending {
		doc := d.doc
		if !d.reused {
			var err error
			if doc, err = encodeJSON(d.value); err != nil {
				return err
			}
		}
		if d.key != "" {
			s.byKey[d.key] = doc
		}
		s.docs[d.path] = doc
		disco.Paths[d.path] = discoveryV3Entry{ServerRelativeURL: "/openapi/v3/" + d.path + "?hash=" + doc.hash}
	}
	var err error
	s.discovery, err = encodeJSON(disco)
	return err
}

// reusable returns the encoded document of key, if s (which may be nil)
// was encoded and has one. A set not encoded yet offers nothing: waiting
// for it, or keeping it for later, would cost more than encoding anew.
func (s *v3Set) reusable(key string) (document, bool) {
	if s == nil || !s.encoded.Load() {
		return document{}, false
	}
	doc, ok := s.byKey[key]
	return doc, ok
}
