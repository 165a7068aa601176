// Package volumeutil holds what the volume controllers share: the
// annotations, finalizers and event reasons through which
// kube-controller-manager's persistent-volume binder, the dynamic
// provisioners, the protection controllers, the resize controller, the
// scheduler and the kubelet talk to each other (their names and meanings
// are Kubernetes' own), and the small readings of claims, volumes and pods
// they all make (a claim's class, whether a volume is bound to a claim,
// which claims a pod uses).
package volumeutil
