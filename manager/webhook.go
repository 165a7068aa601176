package manager

import (
	"errors"
	"net/http"

	"github.com/setpoint-dev/setpoint/webhook"
)

// WebhookServer returns the manager's admission webhook server, made from
// Options.Webhook (its logger defaults to the manager's) the first time it
// is asked for. The manager then runs it on every replica, leader or not,
// once the caches synced, and /readyz gains the check "webhook" (the server
// listens). Ask for it before Start; builder.WebhookManagedBy does.
func (m *Manager) WebhookServer() (*webhook.Server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.webhook != nil {
		return m.webhook, nil
	}
	if m.started {
		return nil, errors.New("manager: the webhook server must be asked for before Start")
	}
	o := m.opts.Webhook
	if o.Logger == nil {
		o.Logger = m.log.With("component", "webhook")
	}
	s := webhook.NewServer(o)
	if err := m.checks.add(readyz, "webhook", func(*http.Request) error {
		select {
		case <-s.Started():
			return nil
		default:
			return errors.New("webhook server not listening")
		}
	}); err != nil {
		return nil, err
	}
	m.others = append(m.others, s)
	m.webhook = s
	return s, nil
}
