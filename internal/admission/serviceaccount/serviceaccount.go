package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// PluginName is the plugin's name in kube-apiserver.
const PluginName = "ServiceAccount"

// What the plugin adds and looks for, as Kubernetes names them.
const (
	DefaultServiceAccountName         = "default"
	VolumeNamePrefix                  = "kube-api-access-"
	MountPath                         = "/var/run/secrets/kubernetes.io/serviceaccount"
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	MirrorPodAnnotation               = "kubernetes.io/config.mirror"
	// TokenExpirationSeconds is the projected token's lifetime: an hour
	// and 7 seconds, by which kube-apiserver recognizes (and warns about)
	// tokens of this volume that are used past their hour.
	TokenExpirationSeconds int64 = 3607
	// RootCAConfigMap is the ConfigMap the root CA publisher keeps in
	// every namespace.
	RootCAConfigMap = "kube-root-ca.crt"
)

var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// Plugin is ServiceAccount: mutating and validating.
type Plugin struct {
	// generateName returns prefix and a random suffix.
	generateName func(prefix string) string
	// defaultAttempts is how often a missing "default" is looked up.
	defaultAttempts int
}

// New returns the plugin.
func New() Plugin {
	return Plugin{generateName: func(p string) string { return p + utilrand.String(5) }, defaultAttempts: 10}
}

// Name implements admission.Plugin.
func (Plugin) Name() string { return PluginName }

// handles returns the pod a is about, nil when the plugin ignores a.
func handles(a *registry.Attributes) *corev1.Pod {
	if admission.GroupResource(a) != (schema.GroupResource{Resource: "pods"}) {
		return nil
	}
	if a.Subresource != "" && a.Subresource != "ephemeralcontainers" {
		return nil
	}
	p, _ := a.Object.(*corev1.Pod)
	return p
}

// Admit completes a created pod from its ServiceAccount, then checks it as
// Validate does.
func (p Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	pod := handles(a)
	if pod == nil || a.Operation != registry.Create || a.Subresource != "" {
		return nil, nil
	}
	if _, mirror := pod.Annotations[MirrorPodAnnotation]; mirror {
		return p.Validate(ctx, env, a)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	sa, err := p.serviceAccount(ctx, env, a)
	if err != nil {
		return nil, err
	}
	if shouldAutomount(sa, pod) {
		p.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return p.Validate(ctx, env, a)
}

// Validate refuses a mirror pod that names a ServiceAccount or references
// secrets, a pod whose ServiceAccount does not exist, and secrets an
// enforce-mountable-secrets ServiceAccount does not list.
func (p Plugin) Validate(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	pod := handles(a)
	if pod == nil {
		return nil, nil
	}
	if a.Operation == registry.Update && a.Subresource == "ephemeralcontainers" {
		return nil, p.validateEphemeral(ctx, env, a, pod)
	}
	if a.Operation != registry.Create || a.Subresource != "" {
		return nil, nil
	}
	if _, mirror := pod.Annotations[MirrorPodAnnotation]; mirror {
		return nil, validateMirror(a, pod)
	}
	sa, err := p.serviceAccount(ctx, env, a)
	if err != nil {
		return nil, err
	}
	if enforcesMountable(sa) {
		if err := limitSecretReferences(sa, pod); err != nil {
			return nil, admission.Forbidden(a, err)
		}
	}
	return nil, nil
}

// validateEphemeral checks the ephemeral containers of an update against
// an enforce-mountable-secrets ServiceAccount.
func (p Plugin) validateEphemeral(ctx context.Context, env registry.Env, a *registry.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		return nil
	}
	sa, err := p.serviceAccount(ctx, env, a)
	if err != nil {
		return err
	}
	if !enforcesMountable(sa) {
		return nil
	}
	if err := limitEphemeralSecretReferences(sa, pod); err != nil {
		// kube-apiserver returns this refusal unwrapped: a 500 with the
		// bare message, no reason and no details.
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: err.Error()}}
	}
	return nil
}

// serviceAccount returns the pod's ServiceAccount, or the 403 that
// refuses the pod.
func (p Plugin) serviceAccount(ctx context.Context, env registry.Env, a *registry.Attributes) (*corev1.ServiceAccount, error) {
	pod := a.Object.(*corev1.Pod)
	ns, name := a.Namespace, pod.Spec.ServiceAccountName
	sa, err := p.lookup(ctx, env, ns, name)
	if err != nil {
		return nil, admission.Forbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", ns, name, err))
	}
	return sa, nil
}

// lookup reads ns/name from the watch cache, then storage; a missing
// "default" is asked for again, as the controller creates it soon.
func (p Plugin) lookup(ctx context.Context, env registry.Env, ns, name string) (*corev1.ServiceAccount, error) {
	objs := env.Objects(serviceAccountsGVR)
	if objs == nil {
		return nil, fmt.Errorf("serviceaccounts are not served")
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = max(p.defaultAttempts, 1)
	}
	wait := time.Duration(100+rand.IntN(100)) * time.Millisecond
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		}
		obj, err := registry.GetCached(ctx, objs, ns, name)
		if err == nil {
			if sa, ok := obj.(*corev1.ServiceAccount); ok {
				return sa, nil
			}
			return nil, fmt.Errorf("unexpected %T", obj)
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
}

// shouldAutomount: the pod's choice, else the ServiceAccount's, else yes.
func shouldAutomount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// enforcesMountable reports the ServiceAccount's annotation.
func enforcesMountable(sa *corev1.ServiceAccount) bool {
	v, ok := sa.Annotations[EnforceMountableSecretsAnnotation]
	if !ok {
		return false
	}
	b, _ := strconv.ParseBool(v)
	return b
}

// mountToken adds the token volume (unless one is there) and mounts it in
// every container that mounts nothing at MountPath.
func (p Plugin) mountToken(pod *corev1.Pod) {
	volumeName, hasVolume := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumeNamePrefix) {
			volumeName, hasVolume = v.Name, true
			break
		}
	}
	if volumeName == "" {
		volumeName = p.generateName(VolumeNamePrefix)
	}
	mount := corev1.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: MountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(cs[i].VolumeMounts, MountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if needed && !hasVolume {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volumeName,
			VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

func mountsAt(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is the projection of the kube-api-access volume.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	mode := corev1.ProjectedVolumeSourceDefaultMode
	expiration := TokenExpirationSeconds
	return &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiration}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}
