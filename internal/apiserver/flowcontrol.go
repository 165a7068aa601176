package apiserver

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/flowcontrol"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// watchWaitLimit is how long a watch may wait in its queue (it has no
// request timeout to take a quarter of), kube-apiserver's figure.
const watchWaitLimit = 15 * time.Second

// maxWaitLimit caps any request's wait in a queue.
const maxWaitLimit = time.Minute

// withPriorityAndFairness admits each request through API Priority and
// Fairness (package flowcontrol): it is classified by the FlowSchemas,
// waits for a seat of its priority level, and is answered 429 with
// Retry-After when its level's queues are full or it waits too long.
// Long-running requests other than watches (exec, attach, port-forward,
// proxy, log) pass unlimited; a watch holds its seat until it is set up
// (its initial phase). Without APF (--enable-priority-and-fairness=false)
// the plain in-flight limit applies.
func (s *Server) withPriorityAndFairness(next http.Handler) http.Handler {
	if s.apf == nil {
		return s.withInflightLimit(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, isResource := parseResourcePath(r)
		if isResource && isLongRunning(info) {
			next.ServeHTTP(w, r)
			return
		}
		req := flowRequest(r, info, isResource)
		noted := func(cl flowcontrol.Classification) {
			// UIDs rather than names, as kube-apiserver: the names an
			// administrator chose stay private.
			w.Header().Set(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID, cl.PriorityLevelUID)
			w.Header().Set(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID, cl.FlowSchemaUID)
		}
		seats := func(flowcontrol.Classification) int { return s.requestSeats(r, info, isResource) }
		kind := "readOnly"
		if isMutating(req.Verb) {
			kind = "mutating"
		}
		var out flowcontrol.Outcome
		if isResource && info.Verb == "watch" {
			out = s.handleWatchAPF(w, r, req, seats, noted, kind, next)
		} else {
			out = s.apf.Handle(r.Context(), req, seats, s.waitLimit(), noted, func() {
				g := s.metrics.inflight.WithLabelValues(kind)
				g.Inc()
				defer g.Dec()
				next.ServeHTTP(w, r)
			})
		}
		if !out.Executed {
			tooManyRequests(w, out.RetryAfter)
		}
	})
}

// handleWatchAPF admits a watch: APF holds its seat from dispatch until
// the handler signals that the watch is set up (or returns), while the
// watch itself runs on in this goroutine.
func (s *Server) handleWatchAPF(w http.ResponseWriter, r *http.Request, req *flowcontrol.Request,
	seats func(flowcontrol.Classification) int, noted func(flowcontrol.Classification), kind string, next http.Handler) flowcontrol.Outcome {
	started := make(chan struct{})
	initialized := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(initialized) }) }
	defer signal()
	result := make(chan flowcontrol.Outcome, 1)
	go func() {
		result <- s.apf.Handle(r.Context(), req, seats, watchWaitLimit, noted, func() {
			g := s.metrics.inflight.WithLabelValues(kind)
			g.Inc()
			defer g.Dec()
			close(started)
			<-initialized
		})
	}()
	select {
	case <-started:
		next.ServeHTTP(w, r.WithContext(flowcontrol.WithWatchInitialized(r.Context(), signal)))
		signal()
		return <-result
	case out := <-result:
		return out
	}
}

// tooManyRequests answers a rejected request as kube-apiserver does: a
// plain-text 429 with Retry-After.
func tooManyRequests(w http.ResponseWriter, retryAfter int64) {
	w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}

// waitLimit is how long a request may wait in its queue: a quarter of
// the request timeout, at most a minute (kube-apiserver's rule).
func (s *Server) waitLimit() time.Duration {
	return min(s.cfg.RequestTimeout/4, maxWaitLimit)
}

// flowRequest describes a request for classification. A request without
// a user (the public paths) is system:anonymous in
// system:unauthenticated, as kube-apiserver's anonymous authenticator
// names it.
func flowRequest(r *http.Request, info requestInfo, isResource bool) *flowcontrol.Request {
	u := registry.UserFrom(r.Context())
	req := &flowcontrol.Request{User: u.Name, Groups: u.Groups}
	if u.Name == "" {
		req.User, req.Groups = "system:anonymous", []string{"system:unauthenticated"}
	}
	if isResource {
		req.IsResource = true
		req.Verb, req.APIGroup, req.Resource, req.Subresource = info.Verb, info.Group, info.Resource, info.Subresource
		req.Namespace, req.Name = info.Namespace, info.Name
		if info.Resource == "namespaces" && info.Namespace == "" && info.Name != "" {
			req.Namespace = info.Name // a namespace is in itself, as kube's request info has it
		}
		return req
	}
	req.Verb, req.Path = strings.ToLower(r.Method), r.URL.Path
	return req
}

// requestSeats estimates a request's width: lists (and watches that
// start with the current objects) by the objects of the resource, every
// other request one seat.
func (s *Server) requestSeats(r *http.Request, info requestInfo, isResource bool) int {
	if !isResource {
		return 1
	}
	q := r.URL.Query()
	switch {
	case info.Verb == "list":
	case info.Verb == "watch" && queryBool(q, "sendInitialEvents"):
	default:
		return 1
	}
	e := s.entry(schema.GroupVersionResource{Group: info.Group, Version: info.Version, Resource: info.Resource})
	if e == nil || e.cache == nil {
		return 1
	}
	limit, _ := strconv.ParseInt(q.Get("limit"), 10, 64)
	return flowcontrol.ListSeats(int64(e.cache.Metrics().Objects), limit)
}
