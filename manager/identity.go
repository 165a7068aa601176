package manager

import (
	"context"
	"fmt"

	"github.com/setpoint-dev/setpoint/record"
	"github.com/setpoint-dev/setpoint/rest"
)

// ClientBuilder hands out the client configuration of a named identity
// (the ServiceAccount of one controller, as kube-controller-manager's
// --use-service-account-credentials does; package clientbuilder).
type ClientBuilder interface {
	Config(name string) (*rest.Config, error)
}

// identity is the client and event broadcaster of one named identity.
type identity struct {
	client      *rest.Client
	broadcaster *record.Broadcaster
}

// ClientFor returns the client a component named name writes with: the
// identity Options.ClientBuilder gives that name, or the manager's own
// client without a builder. Clients are built once per name.
func (m *Manager) ClientFor(name string) (*rest.Client, error) {
	id, err := m.identity(name)
	if err != nil {
		return nil, err
	}
	if id == nil {
		return m.client, nil
	}
	return id.client, nil
}

// EventRecorderFor returns a recorder of Events with source component
// source, written with the client of identity (see ClientFor), as each
// controller of kube-controller-manager records its events with its own
// credentials. Without a ClientBuilder it is GetEventRecorderFor(source).
func (m *Manager) EventRecorderFor(identity, source string) (record.Recorder, error) {
	id, err := m.identity(identity)
	if err != nil {
		return nil, err
	}
	if id == nil {
		return m.GetEventRecorderFor(source)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id.broadcaster == nil {
		b, err := record.NewBroadcaster(record.Options{Sink: record.NewRESTSink(id.client), Scheme: m.scheme,
			Clock: m.opts.Clock, Logger: m.log})
		if err != nil {
			return nil, fmt.Errorf("manager: event broadcaster of %s: %w", identity, err)
		}
		id.broadcaster = b
	}
	return id.broadcaster.NewComponentRecorder(source), nil
}

// identity returns the identity of name, building it on first use; nil
// without a ClientBuilder.
func (m *Manager) identity(name string) (*identity, error) {
	if m.opts.ClientBuilder == nil {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id := m.identities[name]; id != nil {
		return id, nil
	}
	cfg, err := m.opts.ClientBuilder.Config(name)
	if err != nil {
		return nil, fmt.Errorf("manager: client of %s: %w", name, err)
	}
	c, err := rest.NewWithScheme(m.opts.throttled(cfg, m.restMet), m.scheme)
	if err != nil {
		return nil, fmt.Errorf("manager: client of %s: %w", name, err)
	}
	id := &identity{client: c}
	m.identities[name] = id
	return id, nil
}

// stopIdentities writes the queued events of every identity and closes
// their idle connections.
func (m *Manager) stopIdentities(ctx context.Context) {
	m.mu.Lock()
	ids := make([]*identity, 0, len(m.identities))
	for _, id := range m.identities {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		if id.broadcaster != nil {
			if err := id.broadcaster.Shutdown(ctx); err != nil {
				m.log.Error("event broadcaster shutdown", "err", err)
			}
		}
		id.client.CloseIdleConnections()
	}
}
