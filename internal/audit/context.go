package audit

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// request is the audit state of one request: its ID from the start, then
// (once the audit filter has evaluated the policy) its configuration and
// the event being built.
type request struct {
	id       string
	received time.Time

	mu          sync.Mutex
	initialized bool
	cfg         RequestConfig
	sink        *Auditor
	event       Event
	// pending holds annotations added before the policy was evaluated.
	pending map[string]string
}

type requestKey struct{}

// WithRequest starts the audit state of a request with its audit ID and
// receipt time; the server's outermost filter calls it for every request.
func WithRequest(ctx context.Context, id string, received time.Time) context.Context {
	if from(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, &request{id: id, received: received})
}

func from(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// IDFrom returns the request's audit ID ("" outside a request).
func IDFrom(ctx context.Context) string {
	if r := from(ctx); r != nil {
		return r.id
	}
	return ""
}

// LevelFrom returns the level the policy gave the request (None when
// auditing is off or the policy is not evaluated yet).
func LevelFrom(ctx context.Context) Level {
	r := from(ctx)
	if r == nil {
		return LevelNone
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.initialized {
		return LevelNone
	}
	return r.cfg.Level
}

// enabled reports whether anything recorded now may be written: the
// policy is not yet evaluated, or gave a level above None.
func (r *request) enabledLocked() bool {
	return r != nil && (!r.initialized || r.cfg.Level != LevelNone)
}

// AddAnnotation records key=value on the request's audit event, as
// kube-apiserver's audit.AddAuditAnnotation: the authorizer's
// authorization.k8s.io/decision and authorization.k8s.io/reason, PodSecurity's
// pod-security.kubernetes.io/*, and so on. Safe from any goroutine of the
// request, at any point after authentication; a key already set to another
// value keeps its first value. A no-op outside an audited request.
func AddAnnotation(ctx context.Context, key, value string) {
	AddAnnotations(ctx, key, value)
}

// AddAnnotations records several key, value pairs (an odd last key is
// dropped with a log line).
func AddAnnotations(ctx context.Context, keysAndValues ...string) {
	r := from(ctx)
	if r == nil {
		return
	}
	if len(keysAndValues)%2 != 0 {
		slog.Error("dropping mismatched audit annotation", "key", keysAndValues[len(keysAndValues)-1])
		keysAndValues = keysAndValues[:len(keysAndValues)-1]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.enabledLocked() {
		return
	}
	for i := 0; i < len(keysAndValues); i += 2 {
		r.addAnnotationLocked(keysAndValues[i], keysAndValues[i+1])
	}
}

func (r *request) addAnnotationLocked(key, value string) {
	m := &r.event.Annotations
	if !r.initialized {
		m = &r.pending
	}
	if *m == nil {
		*m = map[string]string{}
	}
	if old, ok := (*m)[key]; ok && old != value {
		slog.Warn("audit annotation already set", "key", key, "value", value, "kept", old, "auditID", r.id)
		return
	}
	(*m)[key] = value
}

// Annotations returns a copy of the annotations recorded so far.
func Annotations(ctx context.Context) map[string]string {
	r := from(ctx)
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := maps.Clone(r.pending)
	if r.initialized {
		out = maps.Clone(r.event.Annotations)
	}
	return out
}

// LogImpersonatedUser records the user a request impersonates (Metadata
// level and up), as kube-apiserver's impersonation filter does.
func LogImpersonatedUser(ctx context.Context, user authnv1.UserInfo) {
	r := from(ctx)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.initialized || r.cfg.Level == LevelNone {
		return
	}
	u := user
	r.event.Impersonated = &u
}

// visit runs f on the event of an audited request (level above None).
func visit(ctx context.Context, f func(r *request, ev *Event)) {
	r := from(ctx)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.initialized || r.cfg.Level == LevelNone {
		return
	}
	f(r, &r.event)
}

// SetResponseCode records the HTTP status code of the answer (the
// server's response writer calls it when the headers go out).
func SetResponseCode(ctx context.Context, code int) {
	visit(ctx, func(_ *request, ev *Event) {
		if ev.ResponseStatus == nil {
			ev.ResponseStatus = &metav1.Status{}
		}
		ev.ResponseStatus.Code = int32(code)
	})
}

// SetResponseStatus replaces the recorded response status.
func SetResponseStatus(ctx context.Context, st *metav1.Status) {
	visit(ctx, func(_ *request, ev *Event) { ev.ResponseStatus = st })
}

// HasResponseStatus reports whether a response status is recorded.
func HasResponseStatus(ctx context.Context) bool {
	has := false
	visit(ctx, func(_ *request, ev *Event) { has = ev.ResponseStatus != nil })
	return has
}

// ProcessStage writes the event at stage unless the policy omits it. It
// returns false only when the event could not be written and the log's
// mode makes that an error (blocking-strict, batch).
func ProcessStage(ctx context.Context, stage Stage) bool {
	r := from(ctx)
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.initialized || r.cfg.Level == LevelNone || r.sink == nil {
		return true
	}
	for _, s := range r.cfg.OmitStages {
		if s == stage {
			return true
		}
	}
	r.event.Stage = stage
	if stage == StageRequestReceived {
		r.event.StageTimestamp = r.event.RequestReceivedTimestamp
	} else {
		r.event.StageTimestamp = metav1.NewMicroTime(time.Now())
	}
	return r.sink.write(&r.event)
}

// rawJSON is a JSON body for an event (nil stays absent).
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}
