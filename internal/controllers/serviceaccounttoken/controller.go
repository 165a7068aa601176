package serviceaccounttoken

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/controller"
	"github.com/setpoint-dev/setpoint/handler"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
	"github.com/setpoint-dev/setpoint/manager"
	"github.com/setpoint-dev/setpoint/predicate"
	"github.com/setpoint-dev/setpoint/reconcile"
	"github.com/setpoint-dev/setpoint/rest"
)

const (
	// ControllerName names the controller (queue, metrics, logs).
	ControllerName = "serviceaccount-token"
	// DefaultWorkers is kube-controller-manager's
	// --concurrent-serviceaccount-token-syncs default.
	DefaultWorkers = 5
)

var (
	saGVR     = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	secretGVR = corev1.SchemeGroupVersion.WithResource("secrets")
)

// Signer signs legacy tokens (serviceaccount.Issuer).
type Signer interface {
	IssueLegacy(serviceaccount.LegacyClaims) (string, error)
}

// Options configure the controller.
type Options struct {
	// Signer signs the tokens; nil leaves the controller out.
	Signer Signer
	// RootCA is written as ca.crt (none when empty).
	RootCA []byte
	// Workers is the number of Secrets synced at once (default 5).
	Workers int
}

type reconciler struct {
	log     *slog.Logger
	signer  Signer
	rootCA  []byte
	saInf   *informer.Informer[*corev1.ServiceAccount]
	secInf  *informer.Informer[*corev1.Secret]
	sas     *rest.Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
	secrets *rest.Resource[*corev1.Secret, *corev1.SecretList]
}

// Add registers the controller on mgr; it runs while mgr leads.
func Add(mgr *manager.Manager, opts Options) error {
	log := mgr.Logger().With("controller", ControllerName)
	if opts.Signer == nil {
		log.Info("not started: no service account signing key")
		return nil
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	r := &reconciler{
		log: log, signer: opts.Signer, rootCA: opts.RootCA,
		saInf:   manager.InformerFor[*corev1.ServiceAccount](mgr, saGVR, true),
		secInf:  manager.InformerFor[*corev1.Secret](mgr, secretGVR, true),
		sas:     rest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](mgr.Client(), saGVR, true),
		secrets: rest.For[*corev1.Secret, *corev1.SecretList](mgr.Client(), secretGVR, true),
	}
	copts := mgr.ControllerOptions()
	copts.MaxConcurrentReconciles = opts.Workers
	ctrl, err := controller.New(ControllerName, r, copts)
	if err != nil {
		return fmt.Errorf("serviceaccounttoken: %w", err)
	}
	tokenSecrets := predicate.NewFilter(func(o metav1.Object) bool {
		s, ok := o.(*corev1.Secret)
		return ok && s.Type == corev1.SecretTypeServiceAccountToken
	})
	for _, src := range []controller.Source{
		controller.Kind(r.secInf, "v1 secrets", handler.Object[*corev1.Secret](), tokenSecrets),
		controller.Kind(r.saInf, "v1 serviceaccounts", r.tokensOf),
	} {
		if err := ctrl.Watch(src); err != nil {
			return fmt.Errorf("serviceaccounttoken: %w", err)
		}
	}
	return mgr.Add(ctrl)
}

// tokensOf maps a ServiceAccount to the token Secrets naming it (filled
// when it appears, deleted when it goes).
func (r *reconciler) tokensOf(sa *corev1.ServiceAccount) []reconcile.Request {
	secrets, err := r.secInf.Lister().Namespace(sa.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, s := range secrets {
		if s.Type == corev1.SecretTypeServiceAccountToken && s.Annotations[corev1.ServiceAccountNameKey] == sa.Name {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return out
}

// Reconcile implements reconcile.Reconciler for one Secret.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	secret, err := r.secInf.Lister().Namespace(req.Namespace).Get(req.Name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get secret %s from cache: %w", req, err)
	}
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	sa, err := r.serviceAccount(ctx, secret)
	if err != nil {
		return reconcile.Result{}, err
	}
	if sa == nil {
		r.log.Debug("service account gone, deleting its token", "secret", req.String())
		uid := secret.UID
		err := r.secrets.Namespace(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("delete token secret %s: %w", req, err)
	}
	return reconcile.Result{}, r.fill(ctx, sa, secret)
}

// serviceAccount is the ServiceAccount secret names (with the uid it
// names, if any), from the cache, else from the server; nil when there is
// none.
func (r *reconciler) serviceAccount(ctx context.Context, secret *corev1.Secret) (*corev1.ServiceAccount, error) {
	name, uid := secret.Annotations[corev1.ServiceAccountNameKey], types.UID(secret.Annotations[corev1.ServiceAccountUIDKey])
	if name == "" {
		return nil, nil
	}
	matches := func(sa *corev1.ServiceAccount) bool { return uid == "" || sa.UID == uid }
	if sa, err := r.saInf.Lister().Namespace(secret.Namespace).Get(name); err == nil && matches(sa) {
		return sa, nil
	} else if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get serviceaccount %s/%s from cache: %w", secret.Namespace, name, err)
	}
	sa, err := r.sas.Namespace(secret.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get serviceaccount %s/%s: %w", secret.Namespace, name, err)
	case !matches(sa):
		return nil, nil
	}
	return sa, nil
}

// needs reports what secret lacks: the CA, the namespace, the token.
func (r *reconciler) needs(s *corev1.Secret) (ca, ns, token bool) {
	return len(r.rootCA) > 0 && !bytes.Equal(s.Data[corev1.ServiceAccountRootCAKey], r.rootCA),
		len(s.Data[corev1.ServiceAccountNamespaceKey]) == 0,
		len(s.Data[corev1.ServiceAccountTokenKey]) == 0
}

// fill completes the live Secret if the cached one lacks something and
// the live one is the one cached.
func (r *reconciler) fill(ctx context.Context, sa *corev1.ServiceAccount, cached *corev1.Secret) error {
	if ca, ns, tok := r.needs(cached); !ca && !ns && !tok {
		return nil
	}
	live, err := r.secrets.Namespace(cached.Namespace).Get(ctx, cached.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s/%s: %w", cached.Namespace, cached.Name, err)
	}
	if live.ResourceVersion != cached.ResourceVersion {
		return nil
	}
	needCA, needNS, needToken := r.needs(live)
	if live.Data == nil {
		live.Data = map[string][]byte{}
	}
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	if needCA {
		live.Data[corev1.ServiceAccountRootCAKey] = r.rootCA
	}
	if needNS {
		live.Data[corev1.ServiceAccountNamespaceKey] = []byte(live.Namespace)
	}
	if needToken {
		tok, err := r.signer.IssueLegacy(serviceaccount.LegacyClaims{Namespace: sa.Namespace, SecretName: live.Name,
			ServiceAccountName: sa.Name, ServiceAccountUID: string(sa.UID)})
		if err != nil {
			return err
		}
		live.Data[corev1.ServiceAccountTokenKey] = []byte(tok)
	}
	live.Annotations[corev1.ServiceAccountNameKey] = sa.Name
	live.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	_, err = r.secrets.Namespace(live.Namespace).Update(ctx, live, metav1.UpdateOptions{})
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("update token secret %s/%s: %w", live.Namespace, live.Name, err)
}
