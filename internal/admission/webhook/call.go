package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/webhookclient"
)

// callError is a failure to talk to a webhook (kube's ErrCallingWebhook):
// the failure policy decides.
type callError struct {
	hook   string
	reason error
	status *apierrors.StatusError
}

func (e *callError) Error() string {
	if e.reason != nil {
		return fmt.Sprintf("failed calling webhook %q: %v", e.hook, e.reason)
	}
	return fmt.Sprintf("failed calling webhook %q; no further details available", e.hook)
}

// rejection is a webhook's refusal (kube's ErrWebhookRejection).
type rejection struct{ status *apierrors.StatusError }

func (e *rejection) Error() string { return e.status.Error() }

// caller calls webhooks: one client (cached transports) and codec.
type caller struct {
	client *webhookclient.Client
	codec  runtime.Codec
}

func newCaller() (*caller, error) {
	codec, err := webhookclient.NewCodec([]schema.GroupVersion{admissionv1beta1.SchemeGroupVersion, admissionv1.SchemeGroupVersion},
		admissionv1beta1.AddToScheme, admissionv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	return &caller{client: webhookclient.New(webhookclient.Options{}), codec: codec}, nil
}

// call sends r to h and returns its checked answer; warnings and audit
// annotations of the answer are recorded on the request.
func (c *caller) call(ctx context.Context, env registry.Env, h *hook, r *request, mutating bool) (*response, error) {
	if r.a.DryRun {
		if h.sideEffects == nil {
			return nil, &callError{hook: h.name, reason: errors.New("Webhook SideEffects is nil"), status: apierrors.NewBadRequest("Webhook SideEffects is nil")}
		}
		if se := *h.sideEffects; se != admissionregistrationv1.SideEffectClassNone && se != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
		}
	}
	uid, body, into, err := newReview(h, r)
	if err != nil {
		return nil, &callError{hook: h.name, reason: fmt.Errorf("could not create admission objects: %w", err), status: apierrors.NewBadRequest("error creating admission objects")}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	resp, err := c.client.Post(ctx, h.client, webhookclient.Request{
		Body: body, Timeout: queryTimeout(ctx), Resolver: webhookclient.EnvResolver(env), UserAgent: "kube-apiserver-admission",
	})
	if err == nil {
		err = webhookclient.Decode(resp, c.codec, into)
	}
	if err != nil {
		var ce *webhookclient.ConfigError
		if errors.As(err, &ce) {
			return nil, &callError{hook: h.name, reason: fmt.Errorf("could not get REST client: %w", err), status: apierrors.NewInternalError(err)}
		}
		status, ok := err.(*apierrors.StatusError)
		if !ok {
			status = apierrors.NewServiceUnavailable("error calling webhook")
		}
		return nil, &callError{hook: h.name, reason: fmt.Errorf("failed to call webhook: %w", err), status: status}
	}
	out, err := verify(uid, mutating, into)
	if err != nil {
		return nil, &callError{hook: h.name, reason: fmt.Errorf("received invalid webhook response: %w", err), status: apierrors.NewServiceUnavailable("error validating webhook response")}
	}
	for k, v := range out.auditAnnotations {
		audit.AddAnnotation(ctx, h.name+"/"+k, v)
	}
	for _, w := range out.warnings {
		registry.AddWarning(ctx, w)
	}
	if !out.allowed {
		return nil, &rejection{status: toStatusErr(h.name, out.result)}
	}
	return out, nil
}

// queryTimeout is the ?timeout= of a call: what is left of ctx, rounded
// up to a second, as kube's dispatchers send it.
func queryTimeout(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	t := time.Until(dl)
	if t <= 0 {
		return 0
	}
	if tr := t.Truncate(time.Second); tr != t {
		t = tr + time.Second
	}
	return t
}

// toStatusErr words a webhook's refusal as kube does.
func toStatusErr(name string, result *metav1.Status) *apierrors.StatusError {
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	if result == nil {
		result = &metav1.Status{Status: metav1.StatusFailure}
	}
	if result.Code < 400 {
		result.Code = 400
	}
	if result.Status == "" || result.Status == metav1.StatusSuccess {
		result.Status = metav1.StatusFailure
	}
	switch {
	case result.Message != "":
		result.Message = deniedBy + ": " + result.Message
	case result.Reason != "":
		result.Message = fmt.Sprintf("%s: %s", deniedBy, result.Reason)
	default:
		result.Message = deniedBy + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: *result}
}
