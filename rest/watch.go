package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// streamWatcher decodes a watch stream into events: newline-delimited JSON,
// or the length-prefixed protobuf frames of
// application/vnd.kubernetes.protobuf;stream=watch. One goroutine owns body: it reads, decodes and sends, and on exit closes
// body and then result. Stop and the context both end that goroutine by
// cancelling the request context, which unblocks the read.
type streamWatcher struct {
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	// protobuf selects the protobuf framing; decode then takes the
	// protobuf form of an object ("k8s\x00" and runtime.Unknown).
	protobuf bool
	decode   func([]byte) (runtime.Object, error)
	// status decodes an ERROR event's object in the stream's encoding.
	status func([]byte) (*metav1.Status, error)
	result chan watch.Event
	// done is closed when run has returned (body closed, result closed).
	done chan struct{}
}

func newStreamWatcher(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, protobuf bool,
	decode func([]byte) (runtime.Object, error), status func([]byte) (*metav1.Status, error)) *streamWatcher {
	w := &streamWatcher{ctx: ctx, cancel: cancel, body: body, protobuf: protobuf, decode: decode, status: status,
		result: make(chan watch.Event), done: make(chan struct{})}
	go w.run()
	return w
}

// ResultChan delivers events until the stream ends; it is then closed.
func (w *streamWatcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch and returns once the stream is closed and
// ResultChan has been closed (events not yet read are dropped). It is
// idempotent and safe to call from any goroutine.
func (w *streamWatcher) Stop() {
	w.cancel() // the read error this causes is not reported: run checks ctx.Err first
	<-w.done
}

// wireEvent is metav1.WatchEvent with the object kept raw until its type is
// known.
type wireEvent struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (w *streamWatcher) run() {
	defer close(w.done)
	defer close(w.result)
	defer w.cancel()
	defer w.body.Close()
	next := w.jsonEvents()
	if w.protobuf {
		next = w.protoEvents()
	}
	for {
		ev, err := next()
		if err != nil {
			if w.ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				w.send(errorEvent(fmt.Errorf("read watch stream: %w", err)))
			}
			return
		}
		out, err := w.event(ev)
		if err != nil {
			out = errorEvent(err)
		}
		if !w.send(out) {
			return
		}
	}
}

// event decodes one wire event: ERROR carries a *metav1.Status, the other
// types the watched object type.
func (w *streamWatcher) event(ev wireEvent) (watch.Event, error) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		obj, err := w.decode(ev.Object)
		if err != nil {
			return watch.Event{}, fmt.Errorf("watch %s event: %w", ev.Type, err)
		}
		return watch.Event{Type: ev.Type, Object: obj}, nil
	case watch.Error:
		st, err := w.status(ev.Object)
		if err != nil {
			return watch.Event{}, fmt.Errorf("watch ERROR event: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
	}
	return watch.Event{}, fmt.Errorf("watch: unknown event type %q", ev.Type)
}

// jsonEvents reads the events of a JSON watch stream.
func (w *streamWatcher) jsonEvents() func() (wireEvent, error) {
	dec := json.NewDecoder(w.body)
	return func() (wireEvent, error) {
		var ev wireEvent
		err := dec.Decode(&ev)
		return ev, err
	}
}

// protoEvents reads the events of a protobuf watch stream: each frame a
// metav1.WatchEvent in protobuf.
func (w *streamWatcher) protoEvents() func() (wireEvent, error) {
	var buf []byte
	return func() (wireEvent, error) {
		frame, err := readProtoFrame(w.body, buf)
		if err != nil {
			return wireEvent{}, err
		}
		buf = frame
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			return wireEvent{}, fmt.Errorf("decode protobuf watch event: %w", err)
		}
		return wireEvent{Type: watch.EventType(ev.Type), Object: ev.Object.Raw}, nil
	}
}

func (w *streamWatcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// errorEvent reports a client-side failure in the shape of a server one.
func errorEvent(err error) watch.Event {
	st := apierrors.NewInternalError(err).ErrStatus
	return watch.Event{Type: watch.Error, Object: &st}
}
