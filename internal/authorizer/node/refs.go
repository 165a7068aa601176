package node

import (
	corev1 "k8s.io/api/core/v1"
)

// kind is a type of object the graph relates to nodes.
type kind uint8

const (
	kindSecret kind = iota
	kindConfigMap
	kindPVC
	kindServiceAccount
	kindResourceClaim
)

func (k kind) String() string {
	return [...]string{"secret", "configmap", "persistentvolumeclaim", "serviceaccount", "resourceclaim"}[k]
}

// ref names one object a pod uses, in the pod's namespace.
type ref struct {
	kind kind
	name string
}

// podRefs lists what a pod bound to a node lets its kubelet read, as
// kube's Node authorizer graph takes it from the pod: its ServiceAccount;
// its secrets (image pull secrets, containers' env and envFrom, volumes,
// projected sources, volume plugins' secret references); its ConfigMaps
// (env, envFrom, volumes, projected sources); its claims (persistent
// volume claims, the claims of ephemeral volumes, named <pod>-<volume>);
// its resource claims (by name, or as created for it, from the status).
// A mirror pod grants nothing: a node must not give itself access by
// creating one.
func podRefs(pod *corev1.Pod) []ref {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	var out []ref
	add := func(k kind, name string) {
		if name != "" {
			out = append(out, ref{k, name})
		}
	}
	add(kindServiceAccount, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(kindSecret, s.Name)
	}
	visitContainers(&pod.Spec, func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add(kindSecret, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(kindConfigMap, e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(kindSecret, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		volumeRefs(pod.Name, v, add)
	}
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			add(kindResourceClaim, *c.ResourceClaimName)
		}
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			add(kindResourceClaim, *s.ResourceClaimName)
		}
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil {
		add(kindResourceClaim, s.ResourceClaimName)
	}
	return out
}

// visitContainers calls fn with the env and envFrom of every container:
// init, regular and ephemeral.
func visitContainers(spec *corev1.PodSpec, fn func([]corev1.EnvVar, []corev1.EnvFromSource)) {
	for i := range spec.InitContainers {
		fn(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		fn(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		fn(spec.EphemeralContainers[i].Env, spec.EphemeralContainers[i].EnvFrom)
	}
}

// volumeRefs adds the secrets, ConfigMaps and claims of one volume.
func volumeRefs(podName string, v *corev1.Volume, add func(kind, string)) {
	s := &v.VolumeSource
	secretRef := func(r *corev1.LocalObjectReference) {
		if r != nil {
			add(kindSecret, r.Name)
		}
	}
	switch {
	case s.Secret != nil:
		add(kindSecret, s.Secret.SecretName)
	case s.ConfigMap != nil:
		add(kindConfigMap, s.ConfigMap.Name)
	case s.Projected != nil:
		for _, p := range s.Projected.Sources {
			if p.Secret != nil {
				add(kindSecret, p.Secret.Name)
			}
			if p.ConfigMap != nil {
				add(kindConfigMap, p.ConfigMap.Name)
			}
		}
	case s.PersistentVolumeClaim != nil:
		add(kindPVC, s.PersistentVolumeClaim.ClaimName)
	case s.Ephemeral != nil:
		add(kindPVC, podName+"-"+v.Name)
	case s.AzureFile != nil:
		add(kindSecret, s.AzureFile.SecretName)
	case s.CephFS != nil:
		secretRef(s.CephFS.SecretRef)
	case s.Cinder != nil:
		secretRef(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		secretRef(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		secretRef(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		secretRef(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		secretRef(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		secretRef(s.StorageOS.SecretRef)
	case s.CSI != nil:
		secretRef(s.CSI.NodePublishSecretRef)
	}
}

// pvSecrets lists the secrets a persistent volume names that its node's
// kubelet reads (namespace, name), as kube's PV secret visitor marks them
// kubelet-visible.
func pvSecrets(pv *corev1.PersistentVolume) [][2]string {
	var out [][2]string
	add := func(ns, name string) {
		if name != "" {
			out = append(out, [2]string{ns, name})
		}
	}
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	ref := func(r *corev1.SecretReference) {
		if r != nil {
			ns := r.Namespace
			if ns == "" {
				ns = claimNS
			}
			add(ns, r.Name)
		}
	}
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.AzureFile != nil:
		ns := claimNS
		if s.AzureFile.SecretNamespace != nil {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		ref(s.CephFS.SecretRef)
	case s.Cinder != nil:
		ref(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		ref(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		ref(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		ref(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		ref(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		if s.StorageOS.SecretRef != nil {
			add(s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name)
		}
	case s.CSI != nil:
		ref(s.CSI.NodePublishSecretRef)
		ref(s.CSI.NodeStageSecretRef)
		ref(s.CSI.NodeExpandSecretRef)
	}
	return out
}
