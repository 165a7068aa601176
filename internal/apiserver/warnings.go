package apiserver

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apiserver/pkg/warning"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// withWarnings returns ctx carrying one recorder, through both ways
// warnings are recorded — registry.AddWarning (the kinds' hooks) and
// k8s.io/apiserver/pkg/warning (Kubernetes' CEL validation, which records
// ratcheted rule failures there) — that turns each distinct text into a
// Warning header of w. Warnings recorded after the response's header was
// written are lost, as in Kubernetes.
func withWarnings(ctx context.Context, w http.ResponseWriter) context.Context {
	rec := &warningRecorder{w: w, seen: map[string]bool{}}
	ctx = warning.WithWarningRecorder(ctx, rec)
	return registry.WithWarnings(ctx, func(msg string) { rec.AddWarning("", msg) })
}

type warningRecorder struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	seen map[string]bool
}

// AddWarning implements warning.Recorder.
func (r *warningRecorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if text == "" || r.seen[text] {
		return
	}
	r.seen[text] = true
	addWarning(r.w, text)
}

// addWarning adds an HTTP Warning header as Kubernetes sends them.
func addWarning(w http.ResponseWriter, msg string) {
	msg = strings.ReplaceAll(msg, `"`, `\"`)
	w.Header().Add("Warning", `299 - "`+msg+`"`)
}
