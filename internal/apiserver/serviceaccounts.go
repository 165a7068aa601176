package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// ServiceAccountIssuer is the issuer of the server's service-account
// tokens (its signing key): the controller manager of the same process
// signs legacy tokens with it, as kube-controller-manager does with
// --service-account-private-key-file.
func (s *Server) ServiceAccountIssuer() *serviceaccount.Issuer { return s.tokenIssuer }

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

// errInvalidated is kube-apiserver's answer for a token whose bound
// object is gone.
var errInvalidated = errors.New("service account token has been invalidated")

// authenticateServiceAccount verifies a service-account token for
// audiences (the API server's when empty) and that what it names still
// exists with the same uid (the service account, and the pod, secret or
// node it is bound to; a legacy token's Secret still holding it), as
// kube-apiserver does: a token dies with its objects. It returns
// serviceaccount.ErrNotServiceAccountToken for tokens that are not this
// server's, else kube-apiserver's reason for refusing the token.
func (s *Server) authenticateServiceAccount(ctx context.Context, raw string, audiences []string) (registry.UserInfo, []string, error) {
	now := s.cfg.Clock.Now()
	tok, err := s.tokenIssuer.Verify(raw, now, audiences)
	if err != nil {
		return registry.UserInfo{}, nil, err
	}
	c := tok.Claims
	u := registry.UserInfo{
		Name: serviceaccount.UserName(c.Namespace, c.ServiceAccount.Name), UID: c.ServiceAccount.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + c.Namespace, "system:authenticated"},
	}
	if tok.Legacy != nil {
		return u, tok.Audiences, s.checkLegacyToken(ctx, raw, tok.Legacy, now)
	}
	if err := s.checkBoundObjects(ctx, c, now.Add(-serviceaccount.Leeway)); err != nil {
		return registry.UserInfo{}, nil, err
	}
	u.Extra = map[string][]string{extraCredentialID: {"JTI=" + tok.ID}}
	if c.Pod != nil {
		u.Extra[extraPodName], u.Extra[extraPodUID] = []string{c.Pod.Name}, []string{c.Pod.UID}
	}
	if c.Node != nil {
		u.Extra[extraNodeName], u.Extra[extraNodeUID] = []string{c.Node.Name}, []string{c.Node.UID}
	}
	return u, tok.Audiences, nil
}

// checkBoundObjects checks, with kube-apiserver's messages, that a bound
// token's service account and bound object exist with the uids it names
// and were not deleted before deletedBefore (a deletion within the leeway
// still lets the token through, as Kubernetes does).
func (s *Server) checkBoundObjects(ctx context.Context, c serviceaccount.Claims, deletedBefore time.Time) error {
	sa, err := s.tokenObject(ctx, serviceAccountsGVR, c.Namespace, c.ServiceAccount.Name)
	if err != nil {
		return err
	}
	if string(sa.GetUID()) != c.ServiceAccount.UID {
		return fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.GetUID(), c.ServiceAccount.UID)
	}
	if deletedSince(sa, deletedBefore) {
		return fmt.Errorf("service account %s/%s has been deleted", c.Namespace, c.ServiceAccount.Name)
	}
	check := func(gvr schema.GroupVersionResource, namespace string, ref *serviceaccount.Ref, what string) error {
		obj, err := s.tokenObject(ctx, gvr, namespace, ref.Name)
		switch {
		case err != nil:
			return errInvalidated
		case string(obj.GetUID()) != ref.UID:
			return fmt.Errorf("%s UID (%s) does not match service account %s ref claim (%s)", what, obj.GetUID(), what, ref.UID)
		case deletedSince(obj, deletedBefore):
			return errInvalidated
		}
		return nil
	}
	if c.Secret != nil {
		if err := check(secretsGVR, c.Namespace, c.Secret, "secret"); err != nil {
			return err
		}
	}
	if c.Pod != nil {
		return check(podsGVR, c.Namespace, c.Pod, "pod")
	}
	if c.Node != nil {
		return check(nodesGVR, "", c.Node, "node")
	}
	return nil
}

func deletedSince(obj metav1.Object, before time.Time) bool {
	ts := obj.GetDeletionTimestamp()
	return ts != nil && ts.Time.Before(before)
}

// tokenObject reads an object from the watch cache, else from storage (an
// object created a moment ago), as kube-apiserver's token getter reads its
// informers with a fallback to etcd.
func (s *Server) tokenObject(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (metav1.Object, error) {
	e := s.entry(gvr)
	if e == nil || e.store == nil {
		return nil, fmt.Errorf("%s are not served", gvr.Resource)
	}
	var obj runtime.Object
	obj, ok, _, err := e.cache.Get(e.res.Key(namespace, name))
	if err != nil || !ok {
		if obj, err = e.store.Get(ctx, namespace, name); err != nil {
			return nil, err
		}
	}
	return objectMeta(obj), nil
}
