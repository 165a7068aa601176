package nodeagent

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The simulated containers' logs: each run of a container (an instance)
// writes lines telling its life, timestamped with the agent's clock: it
// started or restarted, it exited with a code, it was killed by the pod's
// deletion. A container keeps its latest instance and the one before, as
// the kubelet keeps the previous container's log for --previous. The
// agent's mutex guards every instance.

// logLine is one line of a container's log.
type logLine struct {
	at   time.Time
	text string
}

// instance is the log of one run of a container.
type instance struct {
	lines []logLine
	// ended is set once the run is over (exited, killed): followers stop.
	ended bool
	// wake is closed, and replaced, whenever lines are added or the run
	// ends.
	wake chan struct{}
}

func newInstance() *instance { return &instance{wake: make(chan struct{})} }

// add appends a line and wakes the followers.
func (in *instance) add(at time.Time, format string, args ...any) {
	in.lines = append(in.lines, logLine{at: at, text: fmt.Sprintf(format, args...)})
	in.notify()
}

// end marks the run over and wakes the followers.
func (in *instance) end() {
	if !in.ended {
		in.ended = true
		in.notify()
	}
}

func (in *instance) notify() {
	close(in.wake)
	in.wake = make(chan struct{})
}

// logBook is the log of one container: its latest instance and the one
// before.
type logBook struct {
	latest, previous *instance
}

// begin starts a new instance, the latest one moving to previous.
func (b *logBook) begin() *instance {
	if b.latest != nil {
		b.latest.end()
	}
	b.previous, b.latest = b.latest, newInstance()
	return b.latest
}

// endAll ends both instances (the pod is gone): followers stop.
func (b *logBook) endAll() {
	for _, in := range []*instance{b.latest, b.previous} {
		if in != nil {
			in.end()
		}
	}
}

// logOptions are the kubelet's containerLogs query parameters.
type logOptions struct {
	follow, previous, timestamps bool
	// since keeps lines at or after it (zero: all).
	since time.Time
	// tail keeps the last tail lines (negative: all).
	tail int64
	// limit stops after limit bytes (zero: no limit).
	limit int64
}

// timestampFormat is the kubelet's log timestamp: RFC 3339 with
// nanoseconds, fixed width.
const timestampFormat = "2006-01-02T15:04:05.000000000Z07:00"

// logWriter writes lines to the client under the options' byte limit.
type logWriter struct {
	w     io.Writer
	flush func()
	opts  logOptions
	sent  int64
}

// write writes lines; it reports false once the byte limit is reached or
// the client is gone.
func (lw *logWriter) write(lines []logLine) bool {
	for _, l := range lines {
		if !lw.opts.since.IsZero() && l.at.Before(lw.opts.since) {
			continue
		}
		s := l.text + "\n"
		if lw.opts.timestamps {
			s = l.at.UTC().Format(timestampFormat) + " " + s
		}
		if lw.opts.limit > 0 && lw.sent+int64(len(s)) > lw.opts.limit {
			s = s[:lw.opts.limit-lw.sent]
		}
		n, err := io.WriteString(lw.w, s)
		lw.sent += int64(n)
		if err != nil || (lw.opts.limit > 0 && lw.sent >= lw.opts.limit) {
			lw.flush()
			return false
		}
	}
	lw.flush()
	return true
}

// tailOf keeps the last n lines that pass the since filter.
func tailOf(lines []logLine, opts logOptions) []logLine {
	if opts.tail < 0 {
		return lines
	}
	var kept []logLine
	for _, l := range lines {
		if opts.since.IsZero() || !l.at.Before(opts.since) {
			kept = append(kept, l)
		}
	}
	if int64(len(kept)) > opts.tail {
		kept = kept[int64(len(kept))-opts.tail:]
	}
	return kept
}

// streamLog writes an instance's lines, then, with follow, the lines it
// gets until it ends or ctx ends. read runs under the agent's mutex.
func (a *Agent) streamLog(ctx context.Context, in *instance, lw *logWriter) {
	a.mu.Lock()
	lines := tailOf(append([]logLine(nil), in.lines...), lw.opts)
	next, ended, wake := len(in.lines), in.ended, in.wake
	a.mu.Unlock()
	if !lw.write(lines) || !lw.opts.follow || lw.opts.previous {
		return
	}
	for !ended {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		a.mu.Lock()
		lines = append([]logLine(nil), in.lines[next:]...)
		next, ended, wake = len(in.lines), in.ended, in.wake
		a.mu.Unlock()
		if !lw.write(lines) {
			return
		}
	}
}
