package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// MutatingName is the plugin's name in kube-apiserver.
const MutatingName = "MutatingAdmissionWebhook"

// kube's audit annotation key prefixes of mutating webhooks.
const (
	patchAnnotationPrefix      = "patch.webhook.admission.k8s.io/"
	mutationAnnotationPrefix   = "mutation.webhook.admission.k8s.io/"
	mutatingFailedOpenPrefix   = "failed-open." + mutationAnnotationPrefix
	mutatingMetricType         = "admit"
	mutatingFailOpenMetricType = "admit"
)

// Mutating is the MutatingAdmissionWebhook plugin: it calls the matching
// webhooks of every MutatingWebhookConfiguration one after the other,
// applying the JSON patch each answers before calling the next.
type Mutating struct {
	src    source
	call   *caller
	metric *metrics
}

// NewMutating returns the plugin.
func NewMutating(o Options) (*Mutating, error) {
	c, err := newCaller()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Metrics)
	if err != nil {
		return nil, err
	}
	return &Mutating{src: source{mutating: true}, call: c, metric: m}, nil
}

// Name is MutatingAdmissionWebhook.
func (p *Mutating) Name() string { return MutatingName }

// Admit calls the webhooks on creates, updates and deletes. A webhook
// with reinvocationPolicy IfNeeded is called a second time when a later
// webhook changed the object after it was called (one reinvocation
// round, as kube-apiserver's).
func (p *Mutating) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	r := newRequest(a)
	if exempt(r) {
		return nil, nil
	}
	hooks, err := p.src.hooks(ctx, env)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var invoked []string          // reinvocable hooks called so far
	reinvoke := map[string]bool{} // hooks to call again
	for i, h := range hooks {
		changed, called, err := p.one(ctx, env, h, i, 0, r)
		if err != nil {
			return nil, err
		}
		if changed {
			for _, id := range invoked {
				reinvoke[id] = true
			}
		}
		if called && h.reinvoke {
			invoked = append(invoked, h.id)
		}
	}
	if len(reinvoke) == 0 {
		return nil, nil
	}
	for i, h := range hooks {
		if !reinvoke[h.id] {
			continue
		}
		if _, _, err := p.one(ctx, env, h, i, 1, r); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// one calls hook h (the idx-th) in round if it matches r, applies its
// patch and reports whether it changed the object.
func (p *Mutating) one(ctx context.Context, env registry.Env, h *hook, idx, round int, r *request) (changed, called bool, err error) {
	target, err := shouldCall(ctx, env, h, r)
	if err != nil || target == nil {
		return false, false, err
	}
	start := time.Now()
	resp, err := p.call.call(ctx, env, h, target, true)
	if err == nil {
		changed, err = applyPatch(ctx, h, idx, round, target, resp)
	}
	if err == nil && changed {
		err = target.writeBack(ctx)
	}
	p.metric.observe(h.name, mutatingMetricType, r.a.Operation, time.Since(start), err, h.failOpen)
	annotate(ctx, fmt.Sprintf("%sround_%d_index_%d", mutationAnnotationPrefix, round, idx),
		map[string]any{"configuration": h.config, "webhook": h.name, "mutated": changed})
	switch e := err.(type) {
	case nil:
		return changed, true, nil
	case *callError:
		if h.failOpen {
			slog.Warn("failed calling webhook, failing open", "webhook", h.name, "err", e)
			p.metric.failOpen.WithLabelValues(h.name, mutatingFailOpenMetricType).Inc()
			audit.AddAnnotation(ctx, fmt.Sprintf("%sround_%d_index_%d", mutatingFailedOpenPrefix, round, idx), h.name)
			if ctx.Err() != nil {
				return false, true, apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
			}
			return false, true, nil
		}
		slog.Warn("failed calling webhook, failing closed", "webhook", h.name, "err", e)
		return false, true, apierrors.NewInternalError(e)
	case *rejection:
		return false, true, e.status
	}
	return false, true, err
}

// applyPatch applies the webhook's JSON patch to the object in place, as
// kube's mutating dispatcher: decoded, then defaulted by the kind.
func applyPatch(ctx context.Context, h *hook, idx, round int, r *request, resp *response) (bool, error) {
	if len(resp.patch) == 0 {
		return false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.patch)
	if err != nil {
		return false, &callError{hook: h.name, reason: fmt.Errorf("received undecodable patch in webhook response: %w", err),
			status: apierrors.NewServiceUnavailable("error decoding patch in webhook response")}
	}
	if len(patch) == 0 {
		return false, nil
	}
	if r.a.Object == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	if resp.patchType != admissionv1.PatchTypeJSONPatch {
		return false, &callError{hook: h.name, reason: fmt.Errorf("unsupported patch type %q", resp.patchType), status: toStatusErr(h.name, resp.result)}
	}
	objJS, err := encodeObject(r.a.Object, r.gvk)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	patched, err := patch.Apply(objJS)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	obj, err := decodeLike(r.a.Object, patched)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if r.a.Resource != nil && r.a.Resource.Strategy != nil && r.subresource == "" {
		r.a.Resource.Strategy.Default(obj)
	}
	changed := !apiequality.Semantic.DeepEqual(r.a.Object, obj)
	if level := audit.LevelFrom(ctx); !level.Less(audit.LevelRequest) {
		annotate(ctx, fmt.Sprintf("%sround_%d_index_%d", patchAnnotationPrefix, round, idx),
			map[string]any{"configuration": h.config, "webhook": h.name, "patch": patch, "patchType": string(admissionv1.PatchTypeJSONPatch)})
	}
	replace(r.a.Object, obj)
	return changed, nil
}

// annotate records an audit annotation whose value is v as JSON.
func annotate(ctx context.Context, key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	audit.AddAnnotation(ctx, key, string(b))
}
