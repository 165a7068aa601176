package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/internal/audit"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// ValidatingName is the plugin's name in kube-apiserver.
const ValidatingName = "ValidatingAdmissionWebhook"

// validatingFailedOpenPrefix is kube's audit annotation key prefix of a
// validating webhook that failed open.
const validatingFailedOpenPrefix = "failed-open.validating.webhook.admission.k8s.io/"

// Validating is the ValidatingAdmissionWebhook plugin: it calls the
// matching webhooks of every ValidatingWebhookConfiguration in parallel
// and refuses the write when one refuses it (or fails under Fail).
type Validating struct {
	src    source
	call   *caller
	metric *metrics
}

// NewValidating returns the plugin.
func NewValidating(o Options) (*Validating, error) {
	c, err := newCaller()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(o.Metrics)
	if err != nil {
		return nil, err
	}
	return &Validating{src: source{mutating: false}, call: c, metric: m}, nil
}

// Name is ValidatingAdmissionWebhook.
func (p *Validating) Name() string { return ValidatingName }

// Validate calls the webhooks on creates, updates and deletes.
func (p *Validating) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	return nil, p.dispatch(ctx, env, a)
}

func (p *Validating) dispatch(ctx context.Context, env registry.Env, a *registry.Attributes) error {
	r := newRequest(a)
	if exempt(r) {
		return nil
	}
	hooks, err := p.src.hooks(ctx, env)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var relevant []*hook
	var targets []*request // the request each relevant hook is called with
	for _, h := range hooks {
		target, err := shouldCall(ctx, env, h, r)
		if err != nil {
			return err
		}
		if target != nil {
			relevant = append(relevant, h)
			targets = append(targets, target)
		}
	}
	if len(relevant) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	}
	if len(relevant) == 1 {
		return p.one(ctx, env, relevant[0], 0, targets[0])
	}
	errs := make(chan error, len(relevant))
	var wg sync.WaitGroup
	for i, h := range relevant {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.one(ctx, env, h, i, targets[i]); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	// The first to fail decides, as in kube-apiserver.
	for err := range errs {
		return err
	}
	return nil
}

// one calls hook h (the idx-th relevant one) and returns the refusal it
// leads to, if any.
func (p *Validating) one(ctx context.Context, env registry.Env, h *hook, idx int, r *request) error {
	start := time.Now()
	_, err := p.call.call(ctx, env, h, r, false)
	p.metric.observe(h.name, "validating", r.a.Operation, time.Since(start), err, h.failOpen)
	switch e := err.(type) {
	case nil:
		return nil
	case *callError:
		if h.failOpen {
			slog.Warn("failed calling webhook, failing open", "webhook", h.name, "err", e)
			p.metric.failOpen.WithLabelValues(h.name, "validating").Inc()
			audit.AddAnnotation(ctx, fmt.Sprintf("%sround_0_index_%d", validatingFailedOpenPrefix, idx), h.name)
			return nil
		}
		slog.Warn("failed calling webhook, failing closed", "webhook", h.name, "err", e)
		return apierrors.NewInternalError(e)
	case *rejection:
		return e.status
	default:
		return err
	}
}
