package apiserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/setpoint-dev/setpoint/internal/objects"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// errLegacyInvalidated is kube-apiserver's answer for a legacy token whose
// Secret is gone or being deleted.
var errLegacyInvalidated = errors.New("Token has been invalidated") //nolint:staticcheck // kube-apiserver's wording

// checkLegacyToken checks a legacy token as kube-apiserver does: its
// Secret must exist, not be deleted, hold this very token and not be
// marked invalid; its service account must exist with the uid it names.
// A token that passes stamps the Secret with the day it was used
// (serviceaccount.LastUsedLabel), once a day.
func (s *Server) checkLegacyToken(ctx context.Context, raw string, c *serviceaccount.LegacyClaims, now time.Time) error {
	obj, err := s.tokenObject(ctx, secretsGVR, c.Namespace, c.SecretName)
	if err != nil {
		return errLegacyInvalidated
	}
	secret, ok := obj.(*corev1.Secret)
	if !ok || secret.DeletionTimestamp != nil {
		return errLegacyInvalidated
	}
	if subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(raw)) == 0 {
		return errors.New("Token does not match server's copy") //nolint:staticcheck // kube-apiserver's wording
	}
	sa, err := s.tokenObject(ctx, serviceAccountsGVR, c.Namespace, c.ServiceAccountName)
	if err != nil {
		return err
	}
	if sa.GetDeletionTimestamp() != nil {
		return fmt.Errorf("ServiceAccount %s/%s has been deleted", c.Namespace, c.ServiceAccountName)
	}
	if string(sa.GetUID()) != c.ServiceAccountUID {
		return fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.GetUID(), c.ServiceAccountUID)
	}
	if secret.Labels[serviceaccount.InvalidSinceLabel] != "" {
		s.markLegacyTokenUsed(ctx, secret, now)
		return fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. "+
			"Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
			c.Namespace, c.SecretName, c.Namespace, c.ServiceAccountName, serviceaccount.InvalidSinceLabel)
	}
	s.markLegacyTokenUsed(ctx, secret, now)
	return nil
}

// markLegacyTokenUsed sets the Secret's last-used label to today (UTC)
// unless it already says today or tomorrow, as kube-apiserver does; a
// failure is logged, never refuses the token.
func (s *Server) markLegacyTokenUsed(ctx context.Context, secret *corev1.Secret, now time.Time) {
	today := now.UTC().Format(time.DateOnly)
	tomorrow := now.UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	if v := secret.Labels[serviceaccount.LastUsedLabel]; v == today || v == tomorrow {
		return
	}
	e := s.entry(secretsGVR)
	_, err := e.store.Mutate(ctx, secret.Namespace, secret.Name, func(obj runtime.Object) error {
		cur := obj.(*corev1.Secret)
		if cur.UID != secret.UID {
			return fmt.Errorf("secret %s/%s was replaced", secret.Namespace, secret.Name)
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels[serviceaccount.LastUsedLabel] = today
		return nil
	}, objects.WriteOptions{})
	if err != nil {
		s.log.Warn("label legacy service account token with its last use", "secret", secret.Namespace+"/"+secret.Name, "err", err)
	}
}
