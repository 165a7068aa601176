package core

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/serviceaccount"
)

var (
	tokenRequestGVK    = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	secretsGVR         = corev1.SchemeGroupVersion.WithResource("secrets")
)

// Token lifetimes kube-apiserver applies to token requests.
const (
	defaultTokenSeconds = 3600
	minTokenSeconds     = 600
)

// tokenSubresource is serviceaccounts/token (`kubectl create token`): a
// TokenRequest answered with a signed token for the service account,
// optionally bound to a pod, secret or node that must exist.
func tokenSubresource() registry.Subresource {
	return registry.Subresource{
		Name: "token", Kind: tokenRequestGVK, Verbs: []string{"create"},
		Action: &registry.Action{
			NewBody: func() runtime.Object { return &authenticationv1.TokenRequest{} },
			Do: func(ctx context.Context, env registry.Env, req registry.Request, body runtime.Object) (runtime.Object, error) {
				return requestToken(ctx, env, req, body.(*authenticationv1.TokenRequest))
			},
		},
	}
}

func requestToken(ctx context.Context, env registry.Env, req registry.Request, tr *authenticationv1.TokenRequest) (runtime.Object, error) {
	obj, err := env.Objects(serviceAccountsGVR).Get(ctx, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	sa := obj.(*corev1.ServiceAccount)
	issuer := env.ServiceAccountTokens()
	spec := tr.Spec
	if spec.ExpirationSeconds == nil {
		spec.ExpirationSeconds = new(int64(defaultTokenSeconds))
	}
	if len(spec.Audiences) == 0 {
		spec.Audiences = issuer.Audiences()
	}
	if errs := validateTokenRequestSpec(&spec); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), tr.Name, errs)
	}
	claims := serviceaccount.Claims{Namespace: sa.Namespace, ServiceAccount: serviceaccount.Ref{Name: sa.Name, UID: string(sa.UID)}}
	if ref := spec.BoundObjectRef; ref != nil {
		if err := bindTokenClaims(ctx, env, sa, ref, &claims); err != nil {
			return nil, err
		}
	}
	now := env.Clock().Now()
	token, exp, err := issuer.Issue(claims, spec.Audiences, now, time.Duration(*spec.ExpirationSeconds)*time.Second)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &authenticationv1.TokenRequest{
		TypeMeta: metav1.TypeMeta{Kind: "TokenRequest", APIVersion: "authentication.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: sa.Name, Namespace: sa.Namespace, UID: sa.UID,
			CreationTimestamp: metav1.NewTime(now.Truncate(time.Second))},
		Spec:   spec,
		Status: authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)},
	}, nil
}

func validateTokenRequestSpec(spec *authenticationv1.TokenRequestSpec) field.ErrorList {
	p := field.NewPath("spec", "expirationSeconds")
	switch n := *spec.ExpirationSeconds; {
	case n < minTokenSeconds:
		return field.ErrorList{field.Invalid(p, n, "may not specify a duration less than 10 minutes")}
	case n > 1<<32:
		return field.ErrorList{field.Invalid(p, n, "may not specify a duration larger than 2^32 seconds")}
	}
	return nil
}

// bindTokenClaims adds the object a token is bound to (and, for a pod on a
// node, the node) to the claims; the object must exist, with the uid the
// reference names, if it names one.
func bindTokenClaims(ctx context.Context, env registry.Env, sa *corev1.ServiceAccount, ref *authenticationv1.BoundObjectReference, c *serviceaccount.Claims) error {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var gvr schema.GroupVersionResource
	namespace := sa.Namespace
	switch gvk {
	case corev1.SchemeGroupVersion.WithKind("Pod"):
		gvr = podsGVR
	case corev1.SchemeGroupVersion.WithKind("Secret"):
		gvr = secretsGVR
	case corev1.SchemeGroupVersion.WithKind("Node"):
		gvr, namespace = nodesGVR, ""
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk))
	}
	obj, err := env.Objects(gvr).Get(ctx, namespace, ref.Name)
	if err != nil {
		return err
	}
	m := obj.(metav1.Object)
	if ref.UID != "" && ref.UID != m.GetUID() {
		return apierrors.NewConflict(gvr.GroupResource(), ref.Name, fmt.Errorf(
			"the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	bound := &serviceaccount.Ref{Name: m.GetName(), UID: string(m.GetUID())}
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Spec.ServiceAccountName != sa.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", sa.Name))
		}
		c.Pod = bound
		if o.Spec.NodeName != "" {
			node, err := env.Objects(nodesGVR).Get(ctx, "", o.Spec.NodeName)
			if err == nil {
				c.Node = &serviceaccount.Ref{Name: o.Spec.NodeName, UID: string(node.(*corev1.Node).UID)}
			}
		}
	case *corev1.Secret:
		c.Secret = bound
	case *corev1.Node:
		c.Node = bound
	}
	return nil
}
