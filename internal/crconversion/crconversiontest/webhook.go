// Package crconversiontest is for tests only: a real HTTPS conversion
// webhook on loopback (webhooktest's server and CA) that
// converts the Widget kind of the tests between v1 (spec.hostPort
// "host:port") and v2 (spec.host, spec.port), records the reviews it
// receives, and can be made to fail as webhooks fail (500, garbage, a
// wrong uid, a hang).
package crconversiontest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// Modes of the webhook: it converts (ModeGood), answers 500 with a text
// body, answers a body that is no JSON, answers with another uid, or
// never answers (until the test ends or the caller gives up).
const (
	ModeGood     = "good"
	Mode500      = "500"
	ModeGarbage  = "garbage"
	ModeWrongUID = "wronguid"
	ModeHang     = "hang"
)

// Webhook is a running conversion webhook.
type Webhook struct {
	// URL is where it listens (https://127.0.0.1:<port>/convert).
	URL string
	// CABundle is the PEM of the CA of its certificate.
	CABundle []byte
	// Port is its loopback port.
	Port int32

	mode atomic.Value // string
	hang chan struct{}

	mu      sync.Mutex
	reviews []Review
}

// Review is what one call carried.
type Review struct {
	APIVersion string
	Desired    string
	Objects    []map[string]any
}

// Start serves a webhook on 127.0.0.1 until the test ends.
func Start(t testing.TB) *Webhook {
	t.Helper()
	return start(t, "127.0.0.1")
}

// StartOn serves a webhook on host (an IP: an EndpointSlice may not name
// a loopback address, so a webhook reached through a Service listens on
// webhooktest.HostIP) with a certificate also valid for names (the
// Service's <name>.<namespace>.svc).
func StartOn(t testing.TB, host string, names ...string) *Webhook {
	t.Helper()
	return start(t, host, names...)
}

func start(t testing.TB, host string, names ...string) *Webhook {
	w := &Webhook{hang: make(chan struct{})}
	w.mode.Store(ModeGood)
	srv := webhooktest.StartOn(t, webhooktest.NewCA(t), host, http.HandlerFunc(w.serve), names...)
	w.URL, w.CABundle, w.Port = srv.URL+"/convert", srv.CABundle, srv.Port
	// Registered after the server's own cleanup, so it runs first: a
	// hanging call returns before the server waits for it.
	t.Cleanup(func() { close(w.hang) })
	return w
}

// SetMode makes the webhook answer as mode says (the Mode constants).
func (w *Webhook) SetMode(mode string) { w.mode.Store(mode) }

// Calls returns the reviews received since the last call and forgets them.
func (w *Webhook) Calls() []Review {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.reviews
	w.reviews = nil
	return out
}

func (w *Webhook) serve(rw http.ResponseWriter, r *http.Request) {
	var in struct {
		APIVersion string `json:"apiVersion"`
		Request    struct {
			UID               string           `json:"uid"`
			DesiredAPIVersion string           `json:"desiredAPIVersion"`
			Objects           []map[string]any `json:"objects"`
		} `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.reviews = append(w.reviews, Review{APIVersion: in.APIVersion, Desired: in.Request.DesiredAPIVersion, Objects: in.Request.Objects})
	w.mu.Unlock()
	mode := w.mode.Load().(string)
	switch mode {
	case Mode500:
		http.Error(rw, "conversion is broken", http.StatusInternalServerError)
		return
	case ModeGarbage:
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte("this is not json"))
		return
	case ModeHang:
		select {
		case <-w.hang:
		case <-r.Context().Done():
		}
		return
	}
	uid := in.Request.UID
	if mode == ModeWrongUID {
		uid = "not-the-request-uid"
	}
	converted := make([]map[string]any, 0, len(in.Request.Objects))
	for _, o := range in.Request.Objects {
		converted = append(converted, ConvertWidget(o, in.Request.DesiredAPIVersion))
	}
	out := map[string]any{
		"apiVersion": in.APIVersion, "kind": "ConversionReview",
		"response": map[string]any{"uid": uid, "result": map[string]any{"status": "Success"}, "convertedObjects": converted},
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(out)
}

// ConvertWidget converts o between v1's spec.hostPort and v2's spec.host
// and spec.port (other fields are kept), in place, and returns it.
func ConvertWidget(o map[string]any, to string) map[string]any {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	from, _ := o["apiVersion"].(string)
	switch {
	case strings.HasSuffix(from, "/v1") && strings.HasSuffix(to, "/v2"):
		if hp, ok := spec["hostPort"].(string); ok {
			host, port, _ := strings.Cut(hp, ":")
			n, _ := strconv.Atoi(port)
			spec["host"], spec["port"] = host, n
			delete(spec, "hostPort")
		}
	case strings.HasSuffix(from, "/v2") && strings.HasSuffix(to, "/v1"):
		if host, ok := spec["host"].(string); ok {
			spec["hostPort"] = fmt.Sprintf("%s:%v", host, spec["port"])
			delete(spec, "host")
			delete(spec, "port")
		}
	}
	o["spec"] = spec
	o["apiVersion"] = to
	return o
}
