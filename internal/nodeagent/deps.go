package nodeagent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/manager"
)

// A pod's dependencies, checked as the kubelet finds them missing: its
// volumes (ConfigMap, Secret, projected sources, a PersistentVolumeClaim
// that must be Bound, the ServiceAccount whose token a projected
// serviceAccountToken source needs) before the sandbox is made, the pod
// waiting ContainerCreating with FailedMount events; the ConfigMaps and
// Secrets of a container's env and envFrom before each of its runs, the
// container waiting in CreateContainerConfigError. Optional references
// never block. Informers on the four kinds requeue the blocked pods of a
// namespace when one of its objects appears or changes.

var (
	configMapsGVR      = corev1.SchemeGroupVersion.WithResource("configmaps")
	secretsGVR         = corev1.SchemeGroupVersion.WithResource("secrets")
	pvcsGVR            = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
)

// deps are the informers of the objects pods depend on.
type deps struct {
	configMaps *informer.Informer[*corev1.ConfigMap]
	secrets    *informer.Informer[*corev1.Secret]
	pvcs       *informer.Informer[*corev1.PersistentVolumeClaim]
	sas        *informer.Informer[*corev1.ServiceAccount]
}

func newDeps(mgr *manager.Manager) deps {
	return deps{
		configMaps: manager.InformerFor[*corev1.ConfigMap](mgr, configMapsGVR, true),
		secrets:    manager.InformerFor[*corev1.Secret](mgr, secretsGVR, true),
		pvcs:       manager.InformerFor[*corev1.PersistentVolumeClaim](mgr, pvcsGVR, true),
		sas:        manager.InformerFor[*corev1.ServiceAccount](mgr, serviceAccountsGVR, true),
	}
}

func (d deps) hasSynced() bool {
	return d.configMaps.HasSynced() && d.secrets.HasSynced() && d.pvcs.HasSynced() && d.sas.HasSynced()
}

// depView answers a pod's dependency checks: the cluster-wide informers
// (deps) when the nodes read with the manager's client, what the pod's
// node read as itself (nodeView) otherwise. Errors are the API's (a
// NotFound) or the reason the object could not be read.
type depView interface {
	configMap(ns, name string) (*corev1.ConfigMap, error)
	secret(ns, name string) (*corev1.Secret, error)
	pvc(ns, name string) (*corev1.PersistentVolumeClaim, error)
	serviceAccount(ns, name string) error
}

func (d deps) configMap(ns, name string) (*corev1.ConfigMap, error) {
	return d.configMaps.Lister().Namespace(ns).Get(name)
}

func (d deps) secret(ns, name string) (*corev1.Secret, error) {
	return d.secrets.Lister().Namespace(ns).Get(name)
}

func (d deps) pvc(ns, name string) (*corev1.PersistentVolumeClaim, error) {
	return d.pvcs.Lister().Namespace(ns).Get(name)
}

func (d deps) serviceAccount(ns, name string) error {
	_, err := d.sas.Lister().Namespace(ns).Get(name)
	return err
}

// depHandler reports the namespace of any change (the agent requeues the
// namespace's blocked pods).
type depHandler[T informer.Object] struct{ changed func(ns string) }

func (h depHandler[T]) OnAdd(o T, _ bool)    { h.changed(o.GetNamespace()) }
func (h depHandler[T]) OnUpdate(_, o T)      { h.changed(o.GetNamespace()) }
func (h depHandler[T]) OnDelete(_ T, _ bool) {}

// watchDeps registers the handlers; it returns a function removing them.
func (a *Agent) watchDeps() (func(), error) {
	var undo []func()
	add := func(err error, remove func()) error {
		if err == nil {
			undo = append(undo, remove)
		}
		return err
	}
	opts := informer.HandlerOptions{Name: "nodeagent-deps"}
	r1, err1 := a.deps.configMaps.AddEventHandler(depHandler[*corev1.ConfigMap]{a.requeueBlocked}, opts)
	err := add(err1, func() { _ = a.deps.configMaps.RemoveEventHandler(r1) })
	if err == nil {
		r2, err2 := a.deps.secrets.AddEventHandler(depHandler[*corev1.Secret]{a.requeueBlocked}, opts)
		err = add(err2, func() { _ = a.deps.secrets.RemoveEventHandler(r2) })
	}
	if err == nil {
		r3, err3 := a.deps.pvcs.AddEventHandler(depHandler[*corev1.PersistentVolumeClaim]{a.requeueBlocked}, opts)
		err = add(err3, func() { _ = a.deps.pvcs.RemoveEventHandler(r3) })
	}
	if err == nil {
		r4, err4 := a.deps.sas.AddEventHandler(depHandler[*corev1.ServiceAccount]{a.requeueBlocked}, opts)
		err = add(err4, func() { _ = a.deps.sas.RemoveEventHandler(r4) })
	}
	remove := func() {
		for _, f := range undo {
			f()
		}
	}
	if err != nil {
		remove()
		return nil, fmt.Errorf("nodeagent: dependency handlers: %w", err)
	}
	return remove, nil
}

// setBlocked records whether the pod waits for a dependency.
func (a *Agent) setBlockedLocked(key types.NamespacedName, blocked bool) {
	if !blocked {
		if m := a.blocked[key.Namespace]; m != nil {
			delete(m, key)
			if len(m) == 0 {
				delete(a.blocked, key.Namespace)
			}
		}
		return
	}
	if a.blocked[key.Namespace] == nil {
		a.blocked[key.Namespace] = map[types.NamespacedName]struct{}{}
	}
	a.blocked[key.Namespace][key] = struct{}{}
}

// requeueBlocked enqueues the pods of the namespace that wait for a
// dependency.
func (a *Agent) requeueBlocked(ns string) {
	a.mu.Lock()
	var keys []types.NamespacedName
	for k := range a.blocked[ns] {
		keys = append(keys, k)
	}
	a.mu.Unlock()
	for _, k := range keys {
		a.queue.Add(k)
	}
}

// blocked reports whether the pod waits for a volume or a container for
// its configuration.
func (ps *podState) blocked() bool {
	if ps.mountErr != "" {
		return true
	}
	for _, c := range append(append([]*ctrState(nil), ps.inits...), ps.containers...) {
		if c.configErr != "" {
			return true
		}
	}
	return false
}

// volumeError is the FailedMount message of the pod's first volume that
// cannot be set up, "" when all can.
func volumeError(d depView, pod *corev1.Pod) string {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if msg := volumeSourceError(d, pod, v); msg != "" {
			return msg
		}
	}
	return ""
}

func volumeSourceError(d depView, pod *corev1.Pod, v *corev1.Volume) string {
	ns := pod.Namespace
	setUp := func(err string) string {
		return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %s", v.Name, err)
	}
	switch {
	case v.ConfigMap != nil && !isTrue(v.ConfigMap.Optional):
		if _, err := d.configMap(ns, v.ConfigMap.Name); err != nil {
			return setUp(depError("configmap", v.ConfigMap.Name, err))
		}
	case v.Secret != nil && !isTrue(v.Secret.Optional):
		if _, err := d.secret(ns, v.Secret.SecretName); err != nil {
			return setUp(depError("secret", v.Secret.SecretName, err))
		}
	case v.Projected != nil:
		if msg := projectedError(d, pod, v.Projected); msg != "" {
			return setUp(msg)
		}
	case v.PersistentVolumeClaim != nil:
		if msg := pvcError(d, ns, v.PersistentVolumeClaim.ClaimName); msg != "" {
			return fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=[%s], unattached volumes=[], "+
				"failed to process volumes=[%s]: %s", v.Name, v.Name, msg)
		}
	}
	return ""
}

// projectedError is why a projected volume cannot be set up: the first
// missing source.
func projectedError(d depView, pod *corev1.Pod, p *corev1.ProjectedVolumeSource) string {
	for _, s := range p.Sources {
		if s.ConfigMap != nil && !isTrue(s.ConfigMap.Optional) {
			if _, err := d.configMap(pod.Namespace, s.ConfigMap.Name); err != nil {
				return depError("configmap", s.ConfigMap.Name, err)
			}
		}
		if s.Secret != nil && !isTrue(s.Secret.Optional) {
			if _, err := d.secret(pod.Namespace, s.Secret.Name); err != nil {
				return depError("secret", s.Secret.Name, err)
			}
		}
		if s.ServiceAccountToken != nil {
			sa := tokenServiceAccount(pod)
			if err := d.serviceAccount(pod.Namespace, sa); err != nil {
				return "failed to fetch token: " + depError("serviceaccounts", sa, err)
			}
		}
	}
	return ""
}

// pvcError is the kubelet's volume manager's error for a claim that is
// missing or not bound.
func pvcError(d depView, ns, name string) string {
	pvc, err := d.pvc(ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("error processing PVC %s/%s: failed to fetch PVC from API server: %s", ns, name,
			notFound("persistentvolumeclaims", name))
	case err != nil:
		return fmt.Sprintf("error processing PVC %s/%s: %v", ns, name, err)
	case pvc.Status.Phase != corev1.ClaimBound:
		return fmt.Sprintf("error processing PVC %s/%s: PVC is not bound", ns, name)
	}
	return ""
}

// envError is why the container's environment cannot be built: a missing
// ConfigMap or Secret (envFrom, or env valueFrom), or a missing key.
func envError(d depView, ns string, spec *corev1.Container) string {
	if spec == nil {
		return ""
	}
	for _, ef := range spec.EnvFrom {
		if r := ef.ConfigMapRef; r != nil && !isTrue(r.Optional) {
			if _, err := d.configMap(ns, r.Name); err != nil {
				return depError("configmap", r.Name, err)
			}
		}
		if r := ef.SecretRef; r != nil && !isTrue(r.Optional) {
			if _, err := d.secret(ns, r.Name); err != nil {
				return depError("secret", r.Name, err)
			}
		}
	}
	for _, e := range spec.Env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil && !isTrue(r.Optional) {
			cm, err := d.configMap(ns, r.Name)
			if err != nil {
				return depError("configmap", r.Name, err)
			}
			if _, ok := cm.Data[r.Key]; !ok {
				if _, ok := cm.BinaryData[r.Key]; !ok {
					return fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", r.Key, ns, r.Name)
				}
			}
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil && !isTrue(r.Optional) {
			s, err := d.secret(ns, r.Name)
			if err != nil {
				return depError("secret", r.Name, err)
			}
			if _, ok := s.Data[r.Key]; !ok {
				if _, ok := s.StringData[r.Key]; !ok {
					return fmt.Sprintf("couldn't find key %s in Secret %s/%s", r.Key, ns, r.Name)
				}
			}
		}
	}
	return ""
}

// depError is the kubelet's message for a dependency it could not read:
// the API server's NotFound wording for the resource as the kubelet names
// it, or the reason (a refused or unsynced watch, a refused get).
func depError(resource, name string, err error) string {
	if apierrors.IsNotFound(err) {
		return notFound(resource, name)
	}
	return err.Error()
}

// notFound is the API server's NotFound message for the resource.
func notFound(resource, name string) string { return fmt.Sprintf("%s %q not found", resource, name) }

func isTrue(b *bool) bool { return b != nil && *b }
