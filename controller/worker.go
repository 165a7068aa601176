package controller

import (
	"context"
	"fmt"
	"runtime/debug"

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
			res, err = reconcile.Result{}, &panicError{value: p}
		}
	}()
	return c.do.Reconcile(ctx, req)
}

// settle applies the retry policy of package reconcile to one outcome.
func (c *Controller) settle(req reconcile.Request, res reconcile.Result, err error) {
	switch {
	case err != nil:
		c.settleError(req, err)
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

// settleError applies the error policy: not retried (terminal, or a class
// in NotRetried), dropped (past MaxRetries), retried at once (an early
// conflict), or retried after the backoff.
func (c *Controller) settleError(req reconcile.Request, err error) {
	class := Classify(err)
	c.metrics.inc(c.metrics.failure)
	c.metrics.countError(class)
	log := c.log.With("namespace", req.Namespace, "name", req.Name)
	failures := c.queue.NumRequeues(req) + 1
	switch {
	case !retried(class, c.notRetried):
		c.metrics.inc(c.metrics.terminal)
		c.queue.Forget(req)
		log.Error("reconcile failed; not retrying", "class", class, "err", err)
	case c.maxRetries > 0 && failures > c.maxRetries:
		c.metrics.inc(c.metrics.dropped)
		c.queue.Forget(req)
		log.Error("reconcile failed too often; dropping the request until its next event",
			"class", class, "failures", failures, "maxRetries", c.maxRetries, "err", err)
		c.dropEvent(req, failures, err)
	case class == ClassConflict && failures <= MaxImmediateConflictRetries:
		c.limiter.When(req) // count the failure; retry without waiting
		c.queue.Add(req)
		log.Debug("reconcile hit a conflict; retrying at once", "err", err)
	default:
		c.queue.AddRateLimited(req)
		log.Error("reconcile failed; retrying with backoff", "class", class, "err", err, "failures", failures)
	}
}
