package serviceaccount

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/internal/admission"
	"github.com/setpoint-dev/setpoint/internal/registry"
)

// validateMirror refuses a mirror pod that names a ServiceAccount,
// references a secret or projects a ServiceAccount token.
func validateMirror(a *registry.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return admission.Forbidden(a, errors.New("a mirror pod may not reference service accounts"))
	}
	if len(secretNames(pod)) > 0 {
		return admission.Forbidden(a, errors.New("a mirror pod may not reference secrets"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				return admission.Forbidden(a, errors.New("a mirror pod may not use ServiceAccountToken volume projections"))
			}
		}
	}
	return nil
}

// limitSecretReferences refuses a secret the pod references that the
// ServiceAccount does not list (volumes, init containers, containers,
// image pull secrets, in this order).
func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=%q is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if err := containerSecrets("init container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	for _, c := range pod.Spec.Containers {
		if err := containerSecrets("container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	pull := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pull[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pull[ref.Name] {
			return fmt.Errorf("imagePullSecrets[%d].name=%q is not allowed because service account %s does not reference that imagePullSecret", i, ref.Name, sa.Name)
		}
	}
	return nil
}

// limitEphemeralSecretReferences is limitSecretReferences for the
// ephemeral containers.
func limitEphemeralSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if err := containerSecrets("ephemeral container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	return nil
}

// containerSecrets refuses the first env or envFrom secret of a container
// that is not mountable.
func containerSecrets(what, name string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource, mountable map[string]bool, sa string) error {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
			return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", what, name, e.Name, e.ValueFrom.SecretKeyRef.Name, sa)
		}
	}
	for _, e := range envFrom {
		if e.SecretRef != nil && !mountable[e.SecretRef.Name] {
			return fmt.Errorf("%s %s with envFrom referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", what, name, e.SecretRef.Name, sa)
		}
	}
	return nil
}

// secretNames are the secrets a pod references anywhere: image pull
// secrets, containers' env and envFrom, and volumes (secret, projected
// secrets, and the secret references of volume plugins).
func secretNames(pod *corev1.Pod) []string {
	var out []string
	add := func(name string) {
		if name != "" {
			out = append(out, name)
		}
	}
	for _, r := range pod.Spec.ImagePullSecrets {
		add(r.Name)
	}
	visit := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add(e.SecretRef.Name)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.Containers {
		visit(c.Env, c.EnvFrom)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		visit(c.Env, c.EnvFrom)
	}
	for _, v := range pod.Spec.Volumes {
		out = append(out, volumeSecrets(&v.VolumeSource)...)
	}
	return out
}

// volumeSecrets are the secrets one volume references.
func volumeSecrets(v *corev1.VolumeSource) []string {
	var out []string
	ref := func(r *corev1.LocalObjectReference) {
		if r != nil && r.Name != "" {
			out = append(out, r.Name)
		}
	}
	switch {
	case v.Secret != nil:
		out = append(out, v.Secret.SecretName)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				out = append(out, s.Secret.Name)
			}
		}
	case v.AzureFile != nil:
		out = append(out, v.AzureFile.SecretName)
	case v.CephFS != nil:
		ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		ref(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		ref(v.RBD.SecretRef)
	case v.ScaleIO != nil:
		ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		ref(v.StorageOS.SecretRef)
	case v.CSI != nil:
		ref(v.CSI.NodePublishSecretRef)
	}
	return out
}
