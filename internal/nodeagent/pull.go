package nodeagent

import (
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Image pulls. A simulated node pulls every image at once (pullEvents),
// except those its Options.UnpullableImages name: a container of such an
// image never starts, as on a node whose registry has no such image. Each
// attempt fails as the kubelet's image manager reports a failed pull
// (events Pulling, Failed "Failed to pull image …" and "Error:
// ErrImagePull"; the container waits in ErrImagePull) and starts the
// image back-off, 10s doubling to 5m, the kubelet's; once the kubelet
// looked at the pod again (pullReportDelay later) the container waits in
// ImagePullBackOff (events BackOff and "Error: ImagePullBackOff") until the
// back-off ends and the pull is tried again. With imagePullPolicy Never
// nothing is pulled: the container waits in ErrImageNeverPull for good.
const (
	// DefaultImagePullBackoff and MaxImagePullBackoff are the kubelet's
	// image back-off bounds.
	DefaultImagePullBackoff = 10 * time.Second
	MaxImagePullBackoff     = 5 * time.Minute
	// pullReportDelay is how long a failed pull shows as ErrImagePull
	// before ImagePullBackOff: the kubelet's next look at the pod.
	pullReportDelay = time.Second
)

// Waiting reasons of a container whose image cannot be had.
const (
	reasonErrImagePull      = "ErrImagePull"
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
)

// pullState is a container's image pull while it cannot be had; the zero
// value is "nothing failed".
type pullState struct {
	// err is the last pull's error (empty: no failure); never is set for
	// imagePullPolicy Never (err is then the kubelet's message).
	err   string
	never bool
	// failedAt is when the last pull failed, retryAt when the back-off,
	// backoff long, ends; noted tells whether the back-off's events were
	// recorded.
	failedAt, retryAt time.Time
	backoff           time.Duration
	noted             bool
}

// imagePolicy tells which images the nodes cannot pull.
type imagePolicy struct {
	patterns []string
}

// newImagePolicy checks the patterns (path.Match syntax, matched against
// the image reference as the pod names it).
func newImagePolicy(patterns []string) (imagePolicy, error) {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return imagePolicy{}, fmt.Errorf("nodeagent: unpullable image pattern %q: %w", p, err)
		}
	}
	return imagePolicy{patterns: patterns}, nil
}

// unpullable returns the pattern image matches, "" when it can be pulled.
func (p imagePolicy) unpullable(image string) string {
	for _, pat := range p.patterns {
		if ok, _ := path.Match(pat, image); ok {
			return pat
		}
	}
	return ""
}

// pull tries to have c's image at "at"; it reports whether the image is
// there. A failure records the kubelet's events and the back-off.
func (ps *podState) pull(c *ctrState, at time.Time, rc *runtimeCtx) bool {
	pattern := rc.images.unpullable(c.image)
	if pattern == "" {
		c.pull = pullState{}
		return true
	}
	if c.spec != nil && c.spec.ImagePullPolicy == corev1.PullNever {
		if !c.pull.never {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.image)
			c.pull = pullState{err: msg, never: true, failedAt: at}
			ps.event(c, corev1.EventTypeWarning, reasonErrImageNeverPull, msg)
			ps.event(c, corev1.EventTypeWarning, "Failed", "Error: "+reasonErrImageNeverPull)
		}
		return false
	}
	err := fmt.Sprintf("rpc error: code = NotFound desc = failed to pull and unpack image %q: "+
		"not found (setpoint: the simulated nodes cannot pull images matching %q)", c.image, pattern)
	ps.event(c, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.image))
	ps.event(c, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", c.image, err))
	ps.event(c, corev1.EventTypeWarning, "Failed", "Error: "+reasonErrImagePull)
	backoff := DefaultImagePullBackoff
	if c.pull.backoff > 0 {
		backoff = min(2*c.pull.backoff, MaxImagePullBackoff)
	}
	c.pull = pullState{err: err, failedAt: at, retryAt: at.Add(backoff), backoff: backoff}
	return false
}

// stepPull makes the due transitions of a container whose pull failed:
// the back-off's events once the kubelet looked again. It reports whether
// anything changed.
func (ps *podState) stepPull(c *ctrState, now time.Time) bool {
	p := &c.pull
	if p.err == "" || p.never || p.noted || now.Before(p.failedAt.Add(pullReportDelay)) {
		return false
	}
	p.noted = true
	ps.event(c, corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", c.image))
	ps.event(c, corev1.EventTypeWarning, "Failed", "Error: "+reasonImagePullBackOff)
	return true
}

// backingOff reports whether c waits for its image back-off at now.
func (c *ctrState) backingOff(now time.Time) bool {
	return c.pull.never || (c.pull.err != "" && now.Before(c.pull.retryAt))
}

// pullWaiting is the waiting state of a container whose image cannot be
// had at now, nil when its image is there.
func (c *ctrState) pullWaiting(now time.Time) *corev1.ContainerStateWaiting {
	p := c.pull
	switch {
	case p.err == "":
		return nil
	case p.never:
		return &corev1.ContainerStateWaiting{Reason: reasonErrImageNeverPull, Message: p.err}
	case now.Before(p.failedAt.Add(pullReportDelay)):
		return &corev1.ContainerStateWaiting{Reason: reasonErrImagePull, Message: p.err}
	}
	return &corev1.ContainerStateWaiting{Reason: reasonImagePullBackOff,
		Message: fmt.Sprintf("Back-off pulling image %q: %s: %s", c.image, reasonErrImagePull, p.err)}
}

// pullTimes are the future transitions of c's failed pull: the kubelet's
// next look and the end of the back-off.
func (c *ctrState) pullTimes() []time.Time {
	if c.pull.err == "" || c.pull.never {
		return nil
	}
	return []time.Time{c.pull.failedAt.Add(pullReportDelay), c.pull.retryAt}
}

// adoptPull rebuilds a failed pull from the waiting state an earlier
// incarnation of the agent reported: the back-off starts again at now
// (its events are not recorded again); the zero value for any other
// waiting reason.
func adoptPull(image string, w *corev1.ContainerStateWaiting, now time.Time) pullState {
	switch w.Reason {
	case reasonErrImageNeverPull:
		return pullState{err: w.Message, never: true, failedAt: now}
	case reasonErrImagePull, reasonImagePullBackOff:
		err := strings.TrimPrefix(w.Message, fmt.Sprintf("Back-off pulling image %q: %s: ", image, reasonErrImagePull))
		return pullState{err: err, failedAt: now.Add(-pullReportDelay), retryAt: now.Add(DefaultImagePullBackoff),
			backoff: DefaultImagePullBackoff, noted: true}
	}
	return pullState{}
}
