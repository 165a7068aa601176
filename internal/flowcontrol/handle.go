package flowcontrol

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Outcome is what Handle did with a request.
type Outcome struct {
	Classification
	// Executed is true when execute ran; otherwise the request was
	// rejected for Reason and the client is told to retry after
	// RetryAfter seconds.
	Executed   bool
	Reason     string
	RetryAfter int64
}

// Handle classifies r, tells noted the classification, and runs execute
// once its priority level has seats for it: at once for an exempt level
// or one with room; after waiting in its flow's queue otherwise, for at
// most waitLimit. A level that does not queue, a full queue, or a wait
// past the limit (or a ctx that ends) rejects the request without
// running execute. seats says how many seats the request occupies once
// classified (at least 1).
func (c *Controller) Handle(ctx context.Context, r *Request, seats func(Classification) int, waitLimit time.Duration,
	noted func(Classification), execute func()) Outcome {
	cl, lv, ok := c.classify(r)
	if !ok {
		cl, lv = c.catchAll()
	}
	if noted != nil {
		noted(cl)
	}
	n := 1
	if seats != nil && !cl.Exempt {
		n = max(seats(cl), 1)
	}
	c.opts.Metrics.estimated(cl.PriorityLevel, cl.FlowSchema, n)
	waitCtx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	req, err := lv.qs.start(waitCtx, cl.FlowSchema, cl.Distinguisher, n, flowHash(cl.FlowSchema, cl.Distinguisher))
	if err != nil {
		c.retry.dropped(cl.PriorityLevel)
		return Outcome{Classification: cl, Reason: req.reason, RetryAfter: c.retry.get(cl.PriorityLevel)}
	}
	defer lv.qs.finish(req)
	execute()
	return Outcome{Classification: cl, Executed: true}
}

// catchAll is the classification of a request no schema matches (none
// does only when it carries neither system:authenticated nor
// system:unauthenticated): the catch-all level.
func (c *Controller) catchAll() (Classification, *level) {
	cfg := c.cur.Load()
	lv := cfg.levels[flowcontrolv1.PriorityLevelConfigurationNameCatchAll]
	cl := Classification{FlowSchema: flowcontrolv1.FlowSchemaNameCatchAll,
		PriorityLevel: lv.pl.Name, PriorityLevelUID: string(lv.pl.UID)}
	for _, fs := range cfg.schemas {
		if fs.Name == flowcontrolv1.FlowSchemaNameCatchAll {
			cl.FlowSchemaUID = string(fs.UID)
		}
	}
	return cl, lv
}
