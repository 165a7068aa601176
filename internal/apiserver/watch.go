package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/setpoint-dev/setpoint/internal/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/watchcache"
)

// watchOptions parses and validates a watch request's parameters.
func (s *Server) watchOptions(r *http.Request, e *entry, info requestInfo) (watchcache.WatchOptions, time.Duration, error) {
	q := r.URL.Query()
	var opts watchcache.WatchOptions
	sel, err := parseSelectors(q)
	if err == nil {
		err = checkFieldSelector(e, sel.field)
	}
	if err != nil {
		return opts, 0, err
	}
	opts.Namespace, opts.Label, opts.Field = info.Namespace, sel.label, sel.field
	if info.Name != "" { // a watch on one object: /watch/.../name or fieldSelector
		opts.Field = combineNameSelector(opts.Field, info.Name)
	}
	opts.AllowBookmarks = queryBool(q, "allowWatchBookmarks")
	rawRV, match := q.Get("resourceVersion"), metav1.ResourceVersionMatch(q.Get("resourceVersionMatch"))
	var rv int64
	if rawRV != "" {
		n, ok := objects.ParseResourceVersion(rawRV)
		if !ok {
			return opts, 0, invalidResourceVersion(rawRV)
		}
		rv = n
	}
	var errs field.ErrorList
	sie, hasSIE := queryBool(q, "sendInitialEvents"), q.Has("sendInitialEvents")
	switch {
	case hasSIE:
		if match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"),
				"sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		}
		if match != "" && match != metav1.ResourceVersionMatchNotOlderThan {
			errs = append(errs, field.NotSupported(field.NewPath("resourceVersionMatch"), match,
				[]string{string(metav1.ResourceVersionMatchNotOlderThan)}))
		}
	case match != "":
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"),
			"resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
	}
	if len(errs) > 0 {
		return opts, 0, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "", errs)
	}
	switch {
	case sie:
		// As kube-apiserver: the bookmark ending the initial events is a
		// bookmark, sent only to a watch that allows them.
		opts.Mode, opts.SendInitialEvents, opts.ResourceVersion = watchcache.InitialEvents, opts.AllowBookmarks, rv
	case hasSIE || (rawRV != "" && rv > 0):
		opts.Mode, opts.ResourceVersion = watchcache.FromRevision, rv
	default: // "" or "0": initial state, then changes
		opts.Mode = watchcache.InitialEvents
	}
	switch {
	case opts.Mode == watchcache.InitialEvents && rawRV == "", opts.Mode == watchcache.FromRevision && rv == 0 && rawRV == "":
		// A consistent start: not older than what storage has now.
		cur, err := s.cfg.Storage.CurrentRevision(r.Context())
		if err != nil {
			return opts, 0, apierrors.NewInternalError(err)
		}
		opts.ResourceVersion = cur
	case opts.Mode == watchcache.FromRevision && rv == 0:
		// sendInitialEvents=false from "0": start at any recent state.
		opts.ResourceVersion = e.cache.Revision()
	}
	// Kubernetes gives watches without timeoutSeconds a random timeout
	// between the minimum request timeout and twice that.
	min := s.cfg.MinRequestTimeout
	timeout := time.Duration(min.Seconds()*(1+rand.Float64())) * time.Second
	if t := q.Get("timeoutSeconds"); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return opts, 0, apierrors.NewBadRequest(err.Error())
		}
		if n < 0 {
			return opts, 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", t))
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	opts.Deadline = s.cfg.Clock.Now().Add(timeout)
	return opts, timeout, nil
}

// handleWatch streams watch events: newline-delimited JSON, or for a client
// that asks for protobuf and a kind that has it, kube-apiserver's
// length-prefixed protobuf frames; it writes queued frames in chunks and
// flushes whenever the watcher's queue is momentarily empty (watchStream).
func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request, e *entry, info requestInfo, mt mediaType) {
	if mt.Type != mimeJSON && !(mt.Type == mimeProtobuf && (mt.As == "" || mt.As == "PartialObjectMetadata")) {
		if mt, _ = negotiateWatch(r.Header.Get("Accept")); mt.Type != mimeJSON {
			s.resp.writeError(w, r, notAcceptable(e.res.Unstructured, true))
			return
		}
	}
	opts, timeout, err := s.watchOptions(r, e, info)
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	stop := context.AfterFunc(s.watchCtx, cancel) // server shutdown ends watches
	defer stop()
	watcher, err := e.cache.Watch(ctx, opts)
	flowcontrol.WatchInitialized(r.Context()) // set up (or failed): the watch leaves its seat
	if errors.Is(err, watchcache.ErrExpired) {
		s.writeWatchError(w, mt, err)
		return
	}
	if err != nil {
		s.resp.writeError(w, r, err)
		return
	}
	defer watcher.Stop()
	compress := acceptsGzip(r, queryBool(r.URL.Query(), "sendInitialEvents"))
	w.Header().Set("Content-Type", watchContentType(mt))
	w.Header().Set("Cache-Control", "no-cache, private")
	if compress {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
	}
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
	out := newWatchStream(w, &s.watchWriters, compress)
	defer out.Close()
	events := s.metrics.watchEvents.WithLabelValues(e.res.Group, e.res.Version, e.res.Kind)
	for {
		f, ok := watcher.Next(ctx)
		if !ok { // the watch ended or timed out
			_ = out.Flush()
			return
		}
		b, err := s.frameBytes(r, mt, e, f)
		if err != nil {
			s.log.Error("encode watch event", "resource", e.res.Resource, "err", err)
			return
		}
		if err := out.Write(b); err != nil {
			return // the client went away
		}
		events.Inc()
		if watcher.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return
			}
		}
	}
}

// watchContentType is the Content-Type of a watch response, as
// kube-apiserver names its streams: plain application/json, and the
// protobuf media type with ;stream=watch.
func watchContentType(mt mediaType) string {
	if mt.Type == mimeProtobuf {
		return mimeProtobuf + ";stream=watch"
	}
	return mimeJSON
}

// writeWatchError answers a watch that cannot start where it asked (its
// resourceVersion is older than the window) as kube-apiserver does: 200,
// then one ERROR event whose object is the 410 Expired Status, which is
// what clients (client-go, the Python client) act on to relist.
func (s *Server) writeWatchError(w http.ResponseWriter, mt mediaType, err error) {
	frame, eerr := s.watchErrorFrame(mt, statusOf(err))
	if eerr != nil {
		s.log.Error("encode watch error", "err", eerr)
		return
	}
	w.Header().Set("Content-Type", watchContentType(mt))
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(frame)
}

// watchErrorFrame is the ERROR event carrying st in mt's watch framing.
func (s *Server) watchErrorFrame(mt mediaType, st *metav1.Status) ([]byte, error) {
	var buf bytes.Buffer
	if mt.Type == mimeProtobuf {
		if err := s.codecs.Proto.Encode(st, &buf); err != nil {
			return nil, err
		}
		return watchcache.ProtoWatchFrame(watch.Error, buf.Bytes())
	}
	if err := s.codecs.JSON.Encode(st, &buf); err != nil {
		return nil, err
	}
	line, err := json.Marshal(metav1.WatchEvent{Type: string(watch.Error), Object: rawExt(bytes.TrimSpace(buf.Bytes()))})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// frameBytes returns the wire form of a frame: the shared bytes for plain
// JSON and protobuf watches, or the event re-rendered as the view asked
// for: a Table for kubectl get -w, PartialObjectMetadata for a metadata
// client.
func (s *Server) frameBytes(r *http.Request, mt mediaType, e *entry, f watchcache.Frame) ([]byte, error) {
	if mt.Type == mimeProtobuf && mt.As == "" {
		return f.ProtoBytes()
	}
	if mt.Type == mimeProtobuf {
		return s.protoViewFrame(r, mt, e, f)
	}
	// Bookmarks are views too for a metadata-only watch, as kube-apiserver
	// sends them (a metadata client decodes every event as
	// PartialObjectMetadata); a Table watch (kubectl get -w) gets them as
	// they are.
	if mt.As == "" || f.Type == watch.Error || f.Type == watch.Bookmark && mt.As != "PartialObjectMetadata" {
		return f.Bytes()
	}
	view, err := s.view(r, mt, e, f.Object())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := s.codecs.JSON.Encode(view, &buf); err != nil {
		return nil, err
	}
	line, err := json.Marshal(metav1.WatchEvent{Type: string(f.Type), Object: rawExt(bytes.TrimSpace(buf.Bytes()))})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// protoViewFrame is the protobuf frame of a metadata-only watch's event
// (the one view with a protobuf form): every event's object, bookmarks
// included, as PartialObjectMetadata, whatever the resource (custom
// resources too, as kube-apiserver); an ERROR event's Status as it is.
func (s *Server) protoViewFrame(r *http.Request, mt mediaType, e *entry, f watchcache.Frame) ([]byte, error) {
	obj := f.Object()
	if f.Type != watch.Error {
		view, err := s.view(r, mt, e, obj)
		if err != nil {
			return nil, err
		}
		obj = view
	}
	var buf bytes.Buffer
	if err := s.codecs.Proto.Encode(obj, &buf); err != nil {
		return nil, err
	}
	return watchcache.ProtoWatchFrame(f.Type, buf.Bytes())
}

// negotiateWatch picks the first JSON entry of Accept for a watch whose
// preferred format has no stream form (YAML): watches are JSON streams,
// or protobuf ones as is or as PartialObjectMetadata.
func negotiateWatch(accept string) (mediaType, bool) {
	for _, part := range strings.Split(accept, ",") {
		if mt, ok := negotiate(part); ok && mt.Type == mimeJSON {
			return mt, true
		}
	}
	return mediaType{}, false
}

// protoEncoder is the watch cache's protobuf encoder of a kind: the
// protobuf serializer's form (magic and runtime.Unknown) for built-in
// kinds, nil for custom resources, which have no protobuf form.
func (s *Server) protoEncoder(unstructured bool) func(runtime.Object, io.Writer) error {
	if unstructured {
		return nil
	}
	return func(obj runtime.Object, w io.Writer) error { return s.codecs.Proto.Encode(obj, w) }
}
