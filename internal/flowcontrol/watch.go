package flowcontrol

import "context"

type watchInitKey struct{}

// WithWatchInitialized returns a context carrying signal, which a watch
// handler calls (through WatchInitialized) once its watch is set up: that
// ends the watch's initial phase, the only one in which it occupies a
// seat of its priority level.
func WithWatchInitialized(ctx context.Context, signal func()) context.Context {
	return context.WithValue(ctx, watchInitKey{}, signal)
}

// WatchInitialized signals that the watch of ctx is set up; it does
// nothing for a context without the signal, and may be called more than
// once.
func WatchInitialized(ctx context.Context) {
	if signal, ok := ctx.Value(watchInitKey{}).(func()); ok {
		signal()
	}
}
