package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxReviewBytes bounds an AdmissionReview body: objects are at most
// about 1.5 MiB in etcd, and an update carries two of them.
const maxReviewBytes = 7 << 20

// Handler answers one admission request.
type Handler interface {
	Handle(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// Handle implements Handler.
func (f HandlerFunc) Handle(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return f(ctx, req)
}

type requestKey struct{}

// RequestFrom returns the admission request being answered, inside a
// Handler, Defaulter or Validator; nil elsewhere.
func RequestFrom(ctx context.Context) *admissionv1.AdmissionRequest {
	req, _ := ctx.Value(requestKey{}).(*admissionv1.AdmissionRequest)
	return req
}

// Allowed admits the request.
func Allowed() *admissionv1.AdmissionResponse { return &admissionv1.AdmissionResponse{Allowed: true} }

// Denied refuses the request with a 403 Forbidden carrying message.
func Denied(message string) *admissionv1.AdmissionResponse {
	return Refused(metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Reason: metav1.StatusReasonForbidden, Message: message})
}

// Refused refuses the request with status as the reason the client sees.
func Refused(status metav1.Status) *admissionv1.AdmissionResponse {
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &status}
}

// Errored refuses the request because the webhook could not answer it
// (a body it cannot read: 400; its own failure: 500).
func Errored(code int32, err error) *admissionv1.AdmissionResponse {
	return Refused(metav1.Status{Code: code, Message: err.Error()})
}

// Admission serves h as an admission webhook: it reads an AdmissionReview
// from a POST, calls h with the request (and RequestFrom in its context)
// and answers with an AdmissionReview of the same apiVersion carrying h's
// response under the request's UID. A body that is not an AdmissionReview
// is answered 400 (the API server then applies the webhook's
// failurePolicy); a panicking h refuses the request with a 500 status.
func Admission(h Handler, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &admissionHandler{h: h, log: log}
}

type admissionHandler struct {
	h   Handler
	log *slog.Logger
}

func (a *admissionHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "admission webhooks take POST", http.StatusMethodNotAllowed)
		return
	}
	review, err := readReview(r.Body)
	if err != nil {
		a.log.Error("admission webhook: unreadable request", "path", r.URL.Path, "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := review.Request
	resp := a.call(context.WithValue(r.Context(), requestKey{}, req), req)
	resp.UID = req.UID
	if !resp.Allowed {
		a.log.Info("admission webhook refused", "path", r.URL.Path, "kind", req.Kind.Kind,
			"namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "message", resp.Result.Message)
	}
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	body, err := json.Marshal(&out)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode AdmissionReview: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// call runs the handler, turning a panic or a nil response into a refusal.
func (a *admissionHandler) call(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("admission webhook panicked", "kind", req.Kind.Kind, "name", req.Name, "panic", p)
			resp = Errored(http.StatusInternalServerError, fmt.Errorf("webhook panicked: %v", p))
		}
	}()
	resp = a.h.Handle(ctx, req)
	if resp == nil {
		resp = Errored(http.StatusInternalServerError, fmt.Errorf("webhook gave no response"))
	}
	if !resp.Allowed && resp.Result == nil {
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden}
	}
	return resp
}

func readReview(body io.Reader) (*admissionv1.AdmissionReview, error) {
	data, err := io.ReadAll(io.LimitReader(body, maxReviewBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read AdmissionReview: %w", err)
	}
	if len(data) > maxReviewBytes {
		return nil, fmt.Errorf("AdmissionReview larger than %d bytes", maxReviewBytes)
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(data, review); err != nil {
		return nil, fmt.Errorf("decode AdmissionReview: %w", err)
	}
	if review.Kind != "AdmissionReview" || (review.APIVersion != "admission.k8s.io/v1" && review.APIVersion != "admission.k8s.io/v1beta1") {
		return nil, fmt.Errorf("expected an admission.k8s.io/v1 AdmissionReview, got apiVersion %q kind %q", review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, fmt.Errorf("AdmissionReview without a request")
	}
	return review, nil
}
