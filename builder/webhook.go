package builder

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/webhook"
)

// WebhookBuilder registers the admission webhooks of one kind, T, on a
// manager's webhook server.
type WebhookBuilder[T runtime.Object] struct {
	mgr       *manager.Manager
	defaulter webhook.Defaulter[T]
	validator webhook.Validator[T]
}

// WebhookManagedBy starts a builder for the webhooks of T, served by m's
// webhook server (manager.WebhookServer):
//
//	err := builder.WebhookManagedBy[*v1.Greeting](mgr).
//		WithDefaulter(d).WithValidator(v).Complete()
func WebhookManagedBy[T runtime.Object](m *manager.Manager) *WebhookBuilder[T] {
	return &WebhookBuilder[T]{mgr: m}
}

// WithDefaulter serves d as T's mutating webhook, at
// webhook.MutatePath(T's kind).
func (b *WebhookBuilder[T]) WithDefaulter(d webhook.Defaulter[T]) *WebhookBuilder[T] {
	b.defaulter = d
	return b
}

// WithValidator serves v as T's validating webhook, at
// webhook.ValidatePath(T's kind).
func (b *WebhookBuilder[T]) WithValidator(v webhook.Validator[T]) *WebhookBuilder[T] {
	b.validator = v
	return b
}

// Complete registers the webhooks. T must be in the manager's scheme; at
// least one of a defaulter and a validator is required; a kind's webhooks
// are registered once.
func (b *WebhookBuilder[T]) Complete() error {
	if b.defaulter == nil && b.validator == nil {
		return errors.New("builder: webhooks of " + fmt.Sprintf("%T", *new(T)) + " need WithDefaulter or WithValidator")
	}
	gvk, err := webhook.KindOf[T](b.mgr.Scheme())
	if err != nil {
		return fmt.Errorf("builder: %w", err)
	}
	srv, err := b.mgr.WebhookServer()
	if err != nil {
		return fmt.Errorf("builder: webhooks of %s: %w", gvk.Kind, err)
	}
	log := srv.Logger()
	if b.defaulter != nil {
		h, err := webhook.Defaulting[T](b.mgr.Scheme(), b.defaulter)
		if err != nil {
			return fmt.Errorf("builder: %w", err)
		}
		if err := srv.Register(webhook.MutatePath(gvk), webhook.Admission(h, log.With("webhook", webhook.MutatePath(gvk)))); err != nil {
			return fmt.Errorf("builder: %w", err)
		}
	}
	if b.validator != nil {
		h, err := webhook.Validating[T](b.mgr.Scheme(), b.validator)
		if err != nil {
			return fmt.Errorf("builder: %w", err)
		}
		if err := srv.Register(webhook.ValidatePath(gvk), webhook.Admission(h, log.With("webhook", webhook.ValidatePath(gvk)))); err != nil {
			return fmt.Errorf("builder: %w", err)
		}
	}
	return nil
}
