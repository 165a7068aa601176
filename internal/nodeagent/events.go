package nodeagent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/record"
)

// kubeletEvent is an event the simulation recorded about a pod (fieldPath
// names the container, empty for the pod itself).
type kubeletEvent struct {
	fieldPath, eventType, reason, message string
}

// event records an event about container c, unless events are off.
func (ps *podState) event(c *ctrState, eventType, reason, message string) {
	if ps.record {
		ps.events = append(ps.events, kubeletEvent{c.fieldPath, eventType, reason, message})
	}
}

// podEvent records an event about the pod.
func (ps *podState) podEvent(eventType, reason, message string) {
	if ps.record {
		ps.events = append(ps.events, kubeletEvent{"", eventType, reason, message})
	}
}

// takeEvents returns and clears the recorded events.
func (ps *podState) takeEvents() []kubeletEvent {
	ev := ps.events
	ps.events = nil
	return ev
}

// pullEvents records the image events of a container's start: with
// imagePullPolicy Always, or the first time the node sees the image, a
// pull (Pulling, Pulled); else the image is already present. Simulated
// pulls take no time.
func (ps *podState) pullEvents(c *ctrState) {
	if !ps.record || c.spec == nil {
		return
	}
	if c.spec.ImagePullPolicy != corev1.PullAlways && ps.node.images[c.image] {
		ps.event(c, corev1.EventTypeNormal, "Pulled",
			fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", c.image))
		return
	}
	if ps.node.images == nil {
		ps.node.images = map[string]bool{}
	}
	ps.node.images[c.image] = true
	ps.event(c, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.image))
	ps.event(c, corev1.EventTypeNormal, "Pulled",
		fmt.Sprintf("Successfully pulled image %q in 0s (0s including waiting). Image size: %d bytes.", c.image, imageSize(c.image)))
}

// imageSize is a stable made-up size of an image (10 to 200 MB).
func imageSize(image string) uint64 {
	h := sha256.Sum256([]byte(image))
	return 10_000_000 + binary.BigEndian.Uint64(h[:8])%190_000_000
}

// writeEvents hands the pod's events to the node's recorder (which writes
// them in the background).
func (a *Agent) writeEvents(pod *corev1.Pod, n *node, evs []kubeletEvent) {
	if len(evs) == 0 || n.recorder == nil {
		return
	}
	for _, ev := range evs {
		ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: ev.fieldPath}
		n.recorder.Event(ref, ev.eventType, ev.reason, ev.message)
	}
}

// startEvents builds the broadcasters (one per client: each node with an
// identity of its own writes its events itself, as a kubelet) and one
// recorder per node (source component "kubelet", host the node), unless
// events are off.
func (a *Agent) startEvents() ([]*record.Broadcaster, error) {
	if a.opts.DisableEvents {
		return nil, nil
	}
	byAPI := map[*nodeAPI]*record.Broadcaster{}
	var all []*record.Broadcaster
	for _, n := range a.ordered {
		b := byAPI[n.api]
		if b == nil {
			var err error
			b, err = record.NewBroadcaster(record.Options{Sink: record.NewRESTSink(n.api.client), Scheme: record.NewScheme(),
				Clock: a.clock, Logger: a.log, QueueSize: a.opts.EventQueueSize})
			if err != nil {
				a.stopEvents(all)
				return nil, fmt.Errorf("nodeagent: event broadcaster: %w", err)
			}
			byAPI[n.api] = b
			all = append(all, b)
		}
		n.recorder = b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: n.name})
	}
	return all, nil
}

// eventFlushTimeout bounds the write of queued events at shutdown.
const eventFlushTimeout = 5 * time.Second

// stopEvents writes the queued events and stops the broadcasters.
func (a *Agent) stopEvents(bs []*record.Broadcaster) {
	ctx, cancel := context.WithTimeout(context.Background(), eventFlushTimeout)
	defer cancel()
	for _, b := range bs {
		if err := b.Shutdown(ctx); err != nil {
			a.log.Error("event broadcaster shutdown", "err", err)
		}
	}
}
