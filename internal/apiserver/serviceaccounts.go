package apiserver

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/pki"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

// newTokenIssuer loads (creating on first use) the service-account signing
// key, shared through PKIDir when set, and returns the issuer of the
// server's tokens, whose audience is the issuer itself (kube-apiserver's
// default --api-audiences).
func newTokenIssuer(cfg Config) (*serviceaccount.Issuer, error) {
	dir := cfg.DataDir
	if cfg.PKIDir != "" {
		dir = cfg.PKIDir
	}
	key, err := pki.EnsureServiceAccountKey(dir)
	if err != nil {
		return nil, err
	}
	return serviceaccount.NewIssuer(key, serviceaccount.DefaultIssuer, []string{serviceaccount.DefaultIssuer})
}

// Extra keys kube-apiserver sets on service-account users.
const (
	extraCredentialID = "authentication.kubernetes.io/credential-id"
	extraPodName      = "authentication.kubernetes.io/pod-name"
	extraPodUID       = "authentication.kubernetes.io/pod-uid"
	extraNodeName     = "authentication.kubernetes.io/node-name"
	extraNodeUID      = "authentication.kubernetes.io/node-uid"
)

var (
	serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	podsGVR            = corev1.SchemeGroupVersion.WithResource("pods")
	secretsGVR         = corev1.SchemeGroupVersion.WithResource("secrets")
	nodesGVR           = corev1.SchemeGroupVersion.WithResource("nodes")
)

// authenticateServiceAccount verifies a service-account token and that
// what it names still exists with the same uid (the service account, and
// the pod, secret or node it is bound to), as kube-apiserver does: a token
// dies with its objects. ok is false for tokens that are not this server's
// service-account tokens, so other authenticators may try them.
func (s *Server) authenticateServiceAccount(ctx context.Context, raw string) (registry.UserInfo, bool) {
	tok, err := s.tokenIssuer.Verify(raw, s.cfg.Clock.Now())
	if err != nil {
		if !errors.Is(err, serviceaccount.ErrNotServiceAccountToken) {
			s.log.Debug("service account token refused", "err", err)
		}
		return registry.UserInfo{}, false
	}
	c := tok.Claims
	if !s.objectHasUID(ctx, serviceAccountsGVR, c.Namespace, c.ServiceAccount) ||
		(c.Pod != nil && !s.objectHasUID(ctx, podsGVR, c.Namespace, *c.Pod)) ||
		(c.Secret != nil && !s.objectHasUID(ctx, secretsGVR, c.Namespace, *c.Secret)) ||
		(c.Node != nil && c.Pod == nil && !s.objectHasUID(ctx, nodesGVR, "", *c.Node)) {
		return registry.UserInfo{}, false
	}
	u := registry.UserInfo{
		Name: serviceaccount.UserName(c.Namespace, c.ServiceAccount.Name), UID: c.ServiceAccount.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + c.Namespace, "system:authenticated"},
		Extra:  map[string][]string{extraCredentialID: {"JTI=" + tok.ID}},
	}
	if c.Pod != nil {
		u.Extra[extraPodName], u.Extra[extraPodUID] = []string{c.Pod.Name}, []string{c.Pod.UID}
	}
	if c.Node != nil {
		u.Extra[extraNodeName], u.Extra[extraNodeUID] = []string{c.Node.Name}, []string{c.Node.UID}
	}
	return u, true
}

// objectHasUID reports whether the object exists with ref's uid, read from
// the watch cache, else from storage (an object created a moment ago).
func (s *Server) objectHasUID(ctx context.Context, gvr schema.GroupVersionResource, namespace string, ref serviceaccount.Ref) bool {
	e := s.entry(gvr)
	if e == nil || e.store == nil {
		return false
	}
	obj, ok, _, err := e.cache.Get(e.res.Key(namespace, ref.Name))
	if err != nil || !ok {
		if obj, err = e.store.Get(ctx, namespace, ref.Name); err != nil {
			return false
		}
	}
	m := objectMeta(obj)
	return string(m.GetUID()) == ref.UID && m.GetDeletionTimestamp() == nil
}
