package webhook

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// metrics are kube-apiserver's apiserver_admission_webhook_* families.
type metrics struct {
	duration  *prometheus.HistogramVec // name, type, operation, rejected
	rejection *prometheus.CounterVec   // name, type, operation, error_type, rejection_code
	failOpen  *prometheus.CounterVec   // name, type
	requests  *prometheus.CounterVec   // name, type, operation, code, rejected
}

// newMetrics creates the families and registers them on reg (nil: not
// registered); families already registered (the other webhook plugin's)
// are shared.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_admission_webhook_admission_duration_seconds",
			Help:    "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25}}, []string{"name", "type", "operation", "rejected"}),
		rejection: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_admission_webhook_rejection_count",
			Help: "[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded."},
			[]string{"name", "type", "operation", "error_type", "rejection_code"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_admission_webhook_fail_open_count",
			Help: "[ALPHA] Admission webhook fail open count, identified by name and broken out for each admission type (validating or mutating)."},
			[]string{"name", "type"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_admission_webhook_request_total",
			Help: "[ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded."},
			[]string{"name", "type", "operation", "code", "rejected"}),
	}
	var err error
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.rejection, err = register(reg, m.rejection); err != nil {
		return nil, err
	}
	if m.failOpen, err = register(reg, m.failOpen); err != nil {
		return nil, err
	}
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c on reg (nil: not at all), or returns the collector
// already registered under its name.
func register[T prometheus.Collector](reg prometheus.Registerer, c T) (T, error) {
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return c, fmt.Errorf("webhook admission: register metrics: %w", err)
		}
		if old, ok := are.ExistingCollector.(T); ok {
			return old, nil
		}
		return c, err
	}
	return c, nil
}

// observe records one call of hook name that ended with err.
func (m *metrics) observe(name, typ string, op registry.Operation, took time.Duration, err error, failOpen bool) {
	rejected, code, errType := false, 200, ""
	switch e := err.(type) {
	case nil:
	case *callError:
		code = int(e.status.ErrStatus.Code)
		if !failOpen {
			rejected, errType = true, "calling_webhook_error"
		}
	case *rejection:
		rejected, code, errType = true, int(e.status.ErrStatus.Code), "no_error"
	default:
		rejected, code, errType = true, 0, "apiserver_internal_error"
	}
	if code > 600 {
		code = 600
	}
	operation := string(op)
	m.duration.WithLabelValues(name, typ, operation, strconv.FormatBool(rejected)).Observe(took.Seconds())
	m.requests.WithLabelValues(name, typ, operation, strconv.Itoa(code), strconv.FormatBool(rejected)).Inc()
	if rejected {
		rc := code
		if errType == "calling_webhook_error" {
			rc = 0
		}
		m.rejection.WithLabelValues(name, typ, operation, errType, strconv.Itoa(rc)).Inc()
	}
}
