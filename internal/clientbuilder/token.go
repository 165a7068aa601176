package clientbuilder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/rest"
)

// Back-off of a failed token fetch: 500 ms doubling, 4 tries (kube's).
const (
	fetchTries   = 4
	fetchBackoff = 500 * time.Millisecond
)

var saGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// tokenSource is the cached token of one ServiceAccount.
type tokenSource struct {
	b    *Builder
	name string

	// mu serialises fetches; tok and renewAt are the token in use and when
	// it must be renewed (zero tok: none).
	mu      sync.Mutex
	tok     string
	renewAt time.Time
}

// token returns the current token, fetching a new one when there is none
// or it is due for renewal.
func (s *tokenSource) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.b.opts.Clock.Now()
	if s.tok != "" && now.Before(s.renewAt) {
		return s.tok, nil
	}
	var err error
	wait := fetchBackoff
	for try := 0; try < fetchTries; try++ {
		var tok string
		var renewAt time.Time
		if tok, renewAt, err = s.fetch(ctx); err == nil {
			s.tok, s.renewAt = tok, renewAt
			return tok, nil
		}
		if ctx.Err() != nil {
			break
		}
		s.b.opts.Logger.Info("get a ServiceAccount token", "serviceAccount", s.b.opts.Namespace+"/"+s.name, "err", err)
		if try < fetchTries-1 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
			wait *= 2
		}
	}
	return "", fmt.Errorf("failed to get token for %s/%s: %w", s.b.opts.Namespace, s.name, err)
}

// reset drops tok if it is still the token in use.
func (s *tokenSource) reset(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok == tok {
		s.tok = ""
	}
}

// fetch makes sure the ServiceAccount exists and requests a token for it;
// it returns the token and when to renew it.
func (s *tokenSource) fetch(ctx context.Context) (string, time.Time, error) {
	ns := s.b.opts.Namespace
	if err := s.ensureServiceAccount(ctx); err != nil {
		return "", time.Time{}, err
	}
	secs := int64(s.b.opts.Expiration / time.Second)
	req := &authenticationv1.TokenRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns},
		Spec:       authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs},
	}
	// The token subresource is addressed as a collection under the
	// ServiceAccount, so that Create posts to .../serviceaccounts/<name>/token.
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts/" + s.name + "/token"}
	res := rest.For[*authenticationv1.TokenRequest, *metav1.List](s.b.client, gvr, true).Namespace(ns)
	out, err := res.Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, err
	}
	if out.Status.Token == "" {
		return "", time.Time{}, errors.New("the TokenRequest answer carries no token")
	}
	now := s.b.opts.Clock.Now()
	lifetime := out.Status.ExpirationTimestamp.Sub(now)
	if lifetime < minLifetime {
		lifetime = minLifetime
	}
	leeway := lifetime * time.Duration(s.b.opts.LeewayPercent) / 100
	return out.Status.Token, now.Add(lifetime - leeway), nil
}

// ensureServiceAccount gets the ServiceAccount and creates it when missing.
func (s *tokenSource) ensureServiceAccount(ctx context.Context) error {
	sas := rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](s.b.client, saGVR, true).Namespace(s.b.opts.Namespace)
	_, err := sas.Get(ctx, s.name, metav1.GetOptions{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.b.opts.Namespace}}
	if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ServiceAccount %s/%s: %w", s.b.opts.Namespace, s.name, err)
	}
	return nil
}
