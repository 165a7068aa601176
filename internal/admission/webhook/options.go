package webhook

import "github.com/prometheus/client_golang/prometheus"

// Options configure the webhook plugins.
type Options struct {
	// Metrics is where the apiserver_admission_webhook_* families are
	// registered (nil: nowhere).
	Metrics prometheus.Registerer
}
