package reflector

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// streamList performs a streaming list: one watch with sendInitialEvents
// that first replays the current objects as ADDED events, ends them with
// the initial-events-end bookmark (the list's resourceVersion), then
// carries live events. On success the sink has been given the Replace and
// the still-open watch is returned. When the server rejects the request
// (an old server or a disabled feature answers 400 or 422), streaming is
// turned off for the reflector's lifetime and (nil, nil) is returned: the
// caller lists instead. Any other failure is returned for a retry.
func (r *Reflector[T, L]) streamList(ctx context.Context) (watch.Interface, error) {
	opts := r.baseOptions()
	if !r.rvUnavailable {
		opts.ResourceVersion = r.LastSyncResourceVersion()
	}
	send := true
	opts.SendInitialEvents = &send
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case streamingRejected(err):
		r.streamingOff = true
		r.log.Info("server rejected streaming lists, using paginated lists from now on", "err", err)
		return nil, nil
	default:
		if versionUnavailable(err) {
			r.rvUnavailable = true
		}
		return nil, fmt.Errorf("streaming list %s from resourceVersion %q: %w", r.name, opts.ResourceVersion, err)
	}
	init := &initialList[T]{}
	err = r.handleWatch(ctx, w, init)
	switch {
	case init.done:
		return w, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err == nil:
		err = errors.New("stream ended")
	}
	if versionUnavailable(err) {
		r.rvUnavailable = true
	}
	return nil, fmt.Errorf("streaming list %s: %w", r.name, err)
}

// streamingRejected tells whether the server refused the parameters of a
// streaming list, as servers without the feature do.
func streamingRejected(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err)
}
