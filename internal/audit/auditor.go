package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/natefinch/lumberjack.v2"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/authorizer"
)

// The modes of the log backend, as kube-apiserver's --audit-log-mode.
const (
	// ModeBlocking writes each event before the request goes on; a
	// failed write is logged and the request proceeds (the default).
	ModeBlocking = "blocking"
	// ModeBlockingStrict is blocking, and a request whose
	// RequestReceived event cannot be written fails with 500.
	ModeBlockingStrict = "blocking-strict"
	// ModeBatch queues events (up to BatchBufferSize) for a writer
	// goroutine; a request finding the queue full fails with 500.
	ModeBatch = "batch"
)

// Options configure auditing, as kube-apiserver's --audit-* flags.
type Options struct {
	// PolicyFile is the audit policy (--audit-policy-file); empty: no
	// auditing.
	PolicyFile string
	// LogPath is the log file (--audit-log-path); "-" is standard output;
	// empty: no log backend, hence no auditing.
	LogPath string
	// MaxAge is how many days rotated files are kept (--audit-log-maxage;
	// 0: no limit).
	MaxAge int
	// MaxBackup is how many rotated files are kept (--audit-log-maxbackup;
	// 0: no limit).
	MaxBackup int
	// MaxSize is the size in megabytes at which the file rotates
	// (--audit-log-maxsize; 0: never).
	MaxSize int
	// Compress gzips rotated files (--audit-log-compress).
	Compress bool
	// Mode is blocking, blocking-strict or batch (--audit-log-mode).
	Mode string
	// BatchBufferSize is the queue of batch mode
	// (--audit-log-batch-buffer-size).
	BatchBufferSize int
}

// DefaultOptions are kube-apiserver's defaults.
func DefaultOptions() Options {
	return Options{MaxAge: 366, MaxBackup: 100, MaxSize: 100, Mode: ModeBlocking, BatchBufferSize: 10000}
}

// Validate checks the options as kube-apiserver does.
func (o Options) Validate() error {
	if o.LogPath == "" {
		return nil
	}
	if o.Mode == "" {
		o.Mode = ModeBlocking
	}
	var errs []error
	modes := []string{ModeBatch, ModeBlocking, ModeBlockingStrict}
	if !slices.Contains(modes, o.Mode) {
		errs = append(errs, fmt.Errorf("invalid audit log mode %s, allowed modes are %q", o.Mode, strings.Join(modes, ",")))
	}
	if o.Mode == ModeBatch && o.BatchBufferSize <= 0 {
		errs = append(errs, fmt.Errorf("invalid audit batch log buffer size %v, must be a positive number", o.BatchBufferSize))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"maxage", o.MaxAge}, {"maxbackup", o.MaxBackup}, {"maxsize", o.MaxSize}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("--audit-log-%s %v can't be a negative number", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// Auditor evaluates the policy for each request and writes the events as
// JSON lines. Its methods are safe for concurrent use.
type Auditor struct {
	policy *Policy
	mode   string
	log    *slog.Logger
	out    io.Writer
	closer io.Closer
	// mu serializes writes (blocking modes) and guards closed.
	mu     sync.Mutex
	closed bool
	// queue and drained: batch mode only.
	queue   chan []byte
	drained chan struct{}
	// active counts audited requests not finished; Close waits for them.
	active inflight
	m      *metrics
}

// New builds the Auditor the options describe; nil (and no error) when
// auditing is off: no policy file, or no log path.
func New(o Options, log *slog.Logger) (*Auditor, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.PolicyFile == "" || o.LogPath == "" {
		if o.LogPath != "" {
			log.Info("No audit policy file provided, no events will be recorded for log backend")
		}
		return nil, nil
	}
	p, err := LoadPolicyFile(o.PolicyFile, log)
	if err != nil {
		return nil, fmt.Errorf("loading audit policy file: %w", err)
	}
	out, closer, err := openLog(o)
	if err != nil {
		return nil, fmt.Errorf("audit log %s: %w", o.LogPath, err)
	}
	return NewWithWriter(p, out, closer, o, log), nil
}

// NewWithWriter builds an Auditor writing to out (closed by Close when
// closer is not nil), with o's mode.
func NewWithWriter(p *Policy, out io.Writer, closer io.Closer, o Options, log *slog.Logger) *Auditor {
	if log == nil {
		log = slog.Default()
	}
	if o.Mode == "" {
		o.Mode = ModeBlocking
	}
	a := &Auditor{policy: p, mode: o.Mode, log: log, out: out, closer: closer, m: newMetrics()}
	if o.Mode == ModeBatch {
		a.queue = make(chan []byte, max(o.BatchBufferSize, 1))
		a.drained = make(chan struct{})
		go a.drain()
	}
	return a
}

// openLog opens the log as kube-apiserver does: "-" is standard output; the
// file (and its directory) is created 0600; with a MaxSize it rotates.
func openLog(o Options) (io.Writer, io.Closer, error) {
	if o.LogPath == "-" {
		return os.Stdout, nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if o.MaxSize == 0 {
		return f, f, nil
	}
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	l := &lumberjack.Logger{Filename: o.LogPath, MaxAge: o.MaxAge, MaxBackups: o.MaxBackup, MaxSize: o.MaxSize, Compress: o.Compress}
	return l, l, nil
}

// Policy returns the policy in force.
func (a *Auditor) Policy() *Policy { return a.policy }

// Collectors are the auditor's metrics (apiserver_audit_*), for the
// server's registry.
func (a *Auditor) Collectors() []prometheus.Collector { return a.m.collectors() }

// RequestMetadata is what the audit filter knows of a request when the
// policy is evaluated.
type RequestMetadata struct {
	Attributes authorizer.Attributes
	// User is the authenticated user (zero when authentication failed).
	User       authnv1.UserInfo
	RequestURI string
	SourceIPs  []string
	UserAgent  string
}

// Begin evaluates the policy for a request and starts its event. It
// returns the level; for a level above None the caller must call End once
// the request is finished. A request without audit state (WithRequest)
// or already begun gets None.
func (a *Auditor) Begin(ctx context.Context, md RequestMetadata) Level {
	r := from(ctx)
	if r == nil {
		return LevelNone
	}
	cfg := a.policy.Evaluate(md.Attributes)
	a.m.level.WithLabelValues(string(cfg.Level)).Inc()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.initialized {
		return LevelNone
	}
	r.initialized, r.cfg, r.sink = true, cfg, a
	if cfg.Level == LevelNone {
		r.pending = nil
		return LevelNone
	}
	a.active.add()
	r.event = Event{
		Kind: "Event", APIVersion: GroupVersion, Level: cfg.Level, AuditID: r.id,
		RequestURI: md.RequestURI, Verb: md.Attributes.Verb, User: md.User,
		SourceIPs: md.SourceIPs, UserAgent: md.UserAgent,
		RequestReceivedTimestamp: metav1.NewMicroTime(r.received),
		Annotations:              r.pending,
	}
	r.pending = nil
	if at := md.Attributes; at.ResourceRequest {
		r.event.ObjectRef = &ObjectReference{
			Namespace: at.Namespace, Name: at.Name, Resource: at.Resource, Subresource: at.Subresource,
			APIGroup: at.APIGroup, APIVersion: at.APIVersion,
		}
	}
	return cfg.Level
}

// Rejected counts a request refused because its RequestReceived event
// could not be written.
func (a *Auditor) Rejected() { a.m.rejected.Inc() }

// End marks an audited request finished (after its last stage).
func (a *Auditor) End() { a.active.done() }

// inflight counts requests; idle tells when none is left.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{}
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.zero != nil {
		close(f.zero)
		f.zero = nil
	}
}

// idle returns a channel closed once no request is in flight.
func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.n == 0 {
		close(ch)
		return ch
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	return f.zero
}

// write sends one event to the log; false when it could not be written
// (reported only in blocking-strict and batch modes, as kube-apiserver).
func (a *Auditor) write(ev *Event) bool {
	line, err := json.Marshal(ev)
	if err != nil {
		a.fail(err, ev)
		return a.mode == ModeBlocking
	}
	line = append(line, '\n')
	a.m.events.Inc()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.fail(errors.New("audit log closed"), ev)
		return a.mode == ModeBlocking
	}
	if a.queue != nil {
		select {
		case a.queue <- line:
			return true
		default:
			a.fail(errors.New("audit buffer queue blocked"), ev)
			return false
		}
	}
	if _, err := a.out.Write(line); err != nil {
		a.fail(err, ev)
		return a.mode == ModeBlocking
	}
	return true
}

func (a *Auditor) fail(err error, ev *Event) {
	a.m.errors.Inc()
	a.log.Error("Error in audit plugin 'log' affecting 1 audit events", "err", err, "auditID", ev.AuditID, "stage", ev.Stage)
}

// drain writes queued lines (batch mode) until the queue is closed.
func (a *Auditor) drain() {
	defer close(a.drained)
	for line := range a.queue {
		if _, err := a.out.Write(line); err != nil {
			a.m.errors.Inc()
			a.log.Error("Error in audit plugin 'log'", "err", err)
		}
	}
}

// Close waits (up to ctx) for the audited requests in flight to write
// their last events, writes what is queued, and closes the log: after a
// clean stop no event is lost.
func (a *Auditor) Close(ctx context.Context) error {
	select {
	case <-a.active.idle():
	case <-ctx.Done():
		a.log.Warn("audit: requests still in flight at shutdown; their last events are dropped")
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	if a.queue != nil {
		close(a.queue)
		select {
		case <-a.drained:
		case <-time.After(30 * time.Second):
			return errors.New("audit: the batch queue did not drain")
		}
	}
	if a.closer != nil {
		return a.closer.Close()
	}
	return nil
}
