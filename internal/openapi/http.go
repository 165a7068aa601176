package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Media types of the protobuf form of Swagger 2.0 (client-go asks for the
// "@" spelling; both are accepted, the "." one is answered).
const (
	mimeJSON           = "application/json"
	mimeV2Proto        = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	mimeV2ProtoDotted  = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v3DiscoveryPath    = "/openapi/v3"
	v3GroupVersionPath = "/openapi/v3/"
)

// Register adds GET (and HEAD) routes for /openapi/v2, /openapi/v3 and
// /openapi/v3/{group-version path} to mux.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi/v2", s.ServeV2)
	mux.HandleFunc("GET "+v3DiscoveryPath, s.ServeV3)
	mux.HandleFunc("GET "+v3GroupVersionPath+"{gv...}", s.ServeV3)
}

// ServeV2 serves the Swagger 2.0 document: protobuf when the Accept header
// prefers one of the proto-openapi media types, JSON otherwise (406 when
// Accept allows neither). Responses carry an ETag and honour
// If-None-Match.
func (s *Service) ServeV2(w http.ResponseWriter, r *http.Request) {
	snap := s.current.Load()
	w.Header().Set("Vary", "Accept")
	contentType := pick(r.Header.Get("Accept"), mimeJSON, mimeV2Proto, mimeV2ProtoDotted)
	if contentType == "" {
		writeStatus(w, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"the OpenAPI v2 document is served as "+mimeJSON+" or "+mimeV2Proto)
		return
	}
	jsonDoc, protoDoc, err := snap.v2(s.opts.Version, s.opts.Logger)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return
	}
	doc := jsonDoc
	if contentType != mimeJSON {
		// Always answered in the dotted spelling: clients parse the
		// response Content-Type with mime.ParseMediaType, which rejects "@".
		doc, contentType = protoDoc, mimeV2ProtoDotted
	}
	serve(w, r, contentType, doc, snap.built)
}

// ServeV3 serves /openapi/v3 (the index of group-version documents) and
// /openapi/v3/<group-version path>. A group-version request whose hash
// query parameter matches the current document is answered with
// immutable caching headers; a stale hash is redirected (301) to the
// current URL; without hash the response has an ETag only.
func (s *Service) ServeV3(w http.ResponseWriter, r *http.Request) {
	snap := s.current.Load()
	if err := snap.v3.ready(); err != nil {
		s.opts.Logger.Error("building OpenAPI v3 failed", "err", err)
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path == v3DiscoveryPath {
		serve(w, r, mimeJSON, snap.v3.discovery, snap.built)
		return
	}
	key, ok := strings.CutPrefix(path, v3GroupVersionPath)
	doc, found := snap.v3.docs[key]
	if !ok || !found {
		w.WriteHeader(http.StatusNotFound) // as kube-apiserver: no body
		return
	}
	w.Header().Set("Vary", "Accept")
	if pick(r.Header.Get("Accept"), mimeJSON) == "" {
		writeStatus(w, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			"OpenAPI v3 documents are served as "+mimeJSON)
		return
	}
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.hash {
			current := url.URL{Path: v3GroupVersionPath + key, RawQuery: "hash=" + doc.hash}
			http.Redirect(w, r, current.String(), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", s.opts.Now().UTC().AddDate(1, 0, 0).Format(http.TimeFormat))
	}
	serve(w, r, mimeJSON, doc, snap.built)
}

// serve writes a cached document; http.ServeContent answers If-None-Match
// and If-Modified-Since with 304 and HEAD without a body.
func serve(w http.ResponseWriter, r *http.Request, contentType string, doc document, modified time.Time) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("ETag", strconv.Quote(doc.hash))
	http.ServeContent(w, r, "", modified, bytes.NewReader(doc.body))
}

// pick returns the first of offers (in the caller's order of preference
// among equals) that the Accept header allows, by descending q. An empty
// header allows the first offer. Media type parameters are ignored.
func pick(accept string, offers ...string) string {
	if strings.TrimSpace(accept) == "" {
		return offers[0]
	}
	type clause struct {
		mediaType string
		q         float64
	}
	var clauses []clause
	for _, part := range strings.Split(accept, ",") {
		// Parsed by hand: the proto-openapi media type has an "@", which
		// mime.ParseMediaType rejects.
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			if parsed, err := strconv.ParseFloat(v, 64); err == nil && strings.TrimSpace(k) == "q" {
				q = parsed
			}
		}
		if mt != "" && q > 0 {
			clauses = append(clauses, clause{mt, q})
		}
	}
	sort.SliceStable(clauses, func(i, j int) bool { return clauses[i].q > clauses[j].q })
	for _, c := range clauses {
		for _, offer := range offers {
			if c.mediaType == offer || c.mediaType == "*/*" ||
				(strings.HasSuffix(c.mediaType, "/*") && strings.HasPrefix(offer, strings.TrimSuffix(c.mediaType, "*"))) {
				return offer
			}
		}
	}
	return ""
}

// writeStatus writes a meta.k8s.io/v1 Status failure.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	body, _ := json.Marshal(&metav1.Status{ // a Status always encodes
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
	w.Header().Set("Content-Type", mimeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
