package podsecurity

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// metrics are kube-apiserver's pod_security_* families.
type metrics struct {
	evaluations *prometheus.CounterVec // decision, policy_level, policy_version, mode, request_operation, resource, subresource
	exemptions  *prometheus.CounterVec // request_operation, resource, subresource
	errors      *prometheus.CounterVec // fatal, request_operation, resource, subresource
	// newest is the newest policy version the server knows: newer pinned
	// versions are counted as "future".
	newest Version
}

// newMetrics creates the families and registers them on reg (nil
// registers nothing); a registry already holding them is reused.
func newMetrics(reg prometheus.Registerer, newest Version) (*metrics, error) {
	m := &metrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_evaluations_total",
			Help: "[ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests."},
			[]string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"}),
		exemptions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_exemptions_total",
			Help: "[ALPHA] Number of exempt requests, not counting ignored or out of scope requests."},
			[]string{"request_operation", "resource", "subresource"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_errors_total",
			Help: "[ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation."},
			[]string{"fatal", "request_operation", "resource", "subresource"}),
		newest: newest,
	}
	if reg != nil {
		for _, c := range []**prometheus.CounterVec{&m.evaluations, &m.exemptions, &m.errors} {
			if err := reg.Register(*c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					return nil, fmt.Errorf("podsecurity: register metrics: %w", err)
				}
				*c = are.ExistingCollector.(*prometheus.CounterVec)
			}
		}
	}
	// the series kube-apiserver shows before any request
	for _, op := range []string{"create", "update"} {
		m.evaluations.WithLabelValues("allow", string(Privileged), "latest", "enforce", op, "pod", "")
		for _, res := range []string{"pod", "controller"} {
			m.exemptions.WithLabelValues(op, res, "")
		}
	}
	return m, nil
}

// request is what the metrics say of a request: its operation, kind of
// resource ("pod", "namespace", "controller") and subresource.
type request struct {
	operation, resource, subresource string
}

func requestOf(a *registry.Attributes, resource string) request {
	op := "create"
	if a.Operation == registry.Update {
		op = "update"
	}
	return request{op, resource, a.Subresource}
}

func (m *metrics) evaluation(decision string, lv LevelVersion, mode string, r request) {
	version := lv.Version.String()
	switch {
	case lv.Version.latest || lv.Level == Privileged:
		version = "latest"
	case m.newest.before(lv.Version):
		version = "future"
	}
	m.evaluations.WithLabelValues(decision, string(lv.Level), version, mode, r.operation, r.resource, r.subresource).Inc()
}

func (m *metrics) exemption(r request) {
	m.exemptions.WithLabelValues(r.operation, r.resource, r.subresource).Inc()
}

func (m *metrics) error(fatal bool, r request) {
	m.errors.WithLabelValues(strconv.FormatBool(fatal), r.operation, r.resource, r.subresource).Inc()
}
