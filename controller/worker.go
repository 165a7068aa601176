package controller

import (
	"context"
	"fmt"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/setpoint-dev/setpoint/reconcile"
)

// processNext takes one request from the queue and reconciles it. It
// returns false once the queue is shut down and empty.
func (c *Controller) processNext(ctx context.Context) bool {
	req, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(req)
	if ctx.Err() != nil {
		// Stopping: the backlog is dropped; only in-flight work drains.
		return true
	}
	c.metrics.activeAdd(1)
	start := c.clock.Now()
	res, err := c.reconcile(ctx, req)
	c.metrics.observe(c.clock.Since(start).Seconds())
	c.metrics.activeAdd(-1)
	c.settle(req, res, err)
	return true
}

// reconcile calls the reconciler, turning a panic into an error.
func (c *Controller) reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.metrics.inc(c.metrics.panics)
			c.log.Error("reconciler panicked", "namespace", req.Namespace, "name", req.Name,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = reconcile.Result{}, fmt.Errorf("panic in reconciler: %v [recovered]", p)
		}
	}()
	return c.do.Reconcile(ctx, req)
}

// settle applies the retry policy of package reconcile to one outcome.
func (c *Controller) settle(req reconcile.Request, res reconcile.Result, err error) {
	log := c.log.With("namespace", req.Namespace, "name", req.Name)
	switch {
	case err != nil && reconcile.IsTerminal(err):
		c.metrics.inc(c.metrics.failure)
		c.metrics.inc(c.metrics.errors)
		c.metrics.inc(c.metrics.terminal)
		c.queue.Forget(req)
		log.Error("reconcile failed with a terminal error; not retrying", "err", err)
	case err != nil && apierrors.IsConflict(err) && c.limiter.NumRequeues(req) < MaxImmediateConflictRetries:
		c.metrics.inc(c.metrics.failure)
		c.metrics.inc(c.metrics.errors)
		c.limiter.When(req) // count the failure; retry without waiting
		c.queue.Add(req)
		log.Debug("reconcile hit a conflict; retrying at once", "err", err)
	case err != nil:
		c.metrics.inc(c.metrics.failure)
		c.metrics.inc(c.metrics.errors)
		c.queue.AddRateLimited(req)
		log.Error("reconcile failed; retrying with backoff", "err", err, "failures", c.queue.NumRequeues(req))
	case res.RequeueAfter > 0:
		c.metrics.inc(c.metrics.reqAfter)
		c.queue.Forget(req)
		c.queue.AddAfter(req, res.RequeueAfter)
	case res.Requeue:
		c.metrics.inc(c.metrics.requeue)
		c.queue.AddRateLimited(req)
	default:
		c.metrics.inc(c.metrics.success)
		c.queue.Forget(req)
	}
}
