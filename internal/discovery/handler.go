package discovery

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Handler serves the discovery documents of a resource set. It is safe for
// concurrent use; Update swaps the resource set atomically, so a request
// sees either the old or the new documents, never a mix.
type Handler struct {
	// current is never nil after New.
	current atomic.Pointer[snapshot]
	log     *slog.Logger
	// mu serializes rebuilds; resources and aggregated are the inputs of
	// the current snapshot.
	mu         sync.Mutex
	resources  []*registry.Resource
	aggregated []Aggregated
}

// New builds the documents of resources. It fails when a resource lacks
// its version, plural name or kind, or when a group/version/resource is
// listed twice. The descriptors are read during the call only.
func New(resources []*registry.Resource) (*Handler, error) {
	s, err := build(resources, nil)
	if err != nil {
		return nil, err
	}
	h := &Handler{log: slog.Default().With("component", "discovery"), resources: resources}
	h.current.Store(s)
	return h, nil
}

// Update replaces the served resource set. On error the previous documents
// stay in place.
func (h *Handler) Update(resources []*registry.Resource) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, err := build(resources, h.aggregated)
	if err != nil {
		return err
	}
	h.resources = resources
	h.current.Store(s)
	return nil
}

// Register adds the discovery routes to mux: GET (and HEAD) on /api,
// /api/{version}, /apis, /apis/{group} and /apis/{group}/{version}. The
// patterns are exact, so they do not collide with resource routes below
// them.
func (h *Handler) Register(mux *http.ServeMux) {
	for _, p := range []string{"/api", "/api/{version}", "/apis", "/apis/{group}", "/apis/{group}/{version}"} {
		mux.Handle("GET "+p, h)
	}
}

// ServeHTTP serves one discovery path (a trailing slash is ignored). Paths
// that name no served group or version get a 404 Status; methods other
// than GET and HEAD get a 405 Status.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
			"the server does not allow this method on the requested resource")
		return
	}
	s := h.current.Load()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "api":
		h.serveRoot(w, r, s, true)
	case len(parts) == 1 && parts[0] == "apis":
		h.serveRoot(w, r, s, false)
	case len(parts) == 2 && parts[0] == "api":
		serveDoc(w, r, s.resourceLists, parts[1])
	case len(parts) == 2 && parts[0] == "apis":
		serveDoc(w, r, s.groups, parts[1])
	case len(parts) == 3 && parts[0] == "apis":
		serveDoc(w, r, s.resourceLists, parts[1]+"/"+parts[2])
	default:
		writeNotFound(w)
	}
}

// serveRoot serves /api (legacy=true) or /apis in the negotiated format.
func (h *Handler) serveRoot(w http.ResponseWriter, r *http.Request, s *snapshot, legacy bool) {
	f := negotiate(r.Header.Get("Accept"))
	w.Header().Set("Vary", "Accept")
	var doc document
	switch f {
	case formatNone:
		writeStatus(w, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"only application/json and the apidiscovery.k8s.io v2 and v2beta1 "+
				"APIGroupDiscoveryList forms are served here")
		return
	case formatV2:
		doc = s.aggregated[aggregatedKey{legacy, versionV2}]
	case formatV2Beta1:
		doc = s.aggregated[aggregatedKey{legacy, versionV2Beta1}]
	case formatLegacy:
		if !legacy {
			doc = s.groupList
			break
		}
		var err error
		if doc, err = s.apiVersions(r.Host); err != nil {
			h.log.Error("encoding /api failed", "err", err)
			writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
			return
		}
		doc.etag = "" // the body depends on the request's host
	}
	w.Header().Set("Content-Type", f.contentType())
	if doc.etag != "" {
		w.Header().Set("ETag", doc.etag)
	}
	// ServeContent answers If-None-Match with 304 and HEAD without a body.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc.body))
}

func serveDoc(w http.ResponseWriter, r *http.Request, docs map[string]document, key string) {
	doc, ok := docs[key]
	if !ok {
		writeNotFound(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc.body))
}

func writeNotFound(w http.ResponseWriter) {
	writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound,
		"the server could not find the requested resource")
}

// writeStatus writes a meta.k8s.io/v1 Status failure, the body every
// Kubernetes client expects on an error.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	body, _ := json.Marshal(&metav1.Status{ // a Status always encodes
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
