package apiserver

import (
	"context"
	"net/http"
	"sync"

	"k8s.io/apiserver/pkg/warning"
)

// withWarnings returns ctx carrying a recorder that turns the warnings
// recorded through it (k8s.io/apiserver/pkg/warning, as Kubernetes' CEL
// validation records ratcheted rule failures) into Warning headers of w,
// each distinct text once. Warnings recorded after the response's header
// was written are lost, as in Kubernetes.
func withWarnings(ctx context.Context, w http.ResponseWriter) context.Context {
	return warning.WithWarningRecorder(ctx, &warningRecorder{w: w, seen: map[string]bool{}})
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
