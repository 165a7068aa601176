package podspec

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DefaultPodSpec fills the defaults Kubernetes gives every pod spec,
// pods and pod templates alike: dnsPolicy, restartPolicy, securityContext,
// terminationGracePeriodSeconds, schedulerName, and the per-container,
// per-volume and per-probe defaults.
func DefaultPodSpec(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = new(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		defaultContainer((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	RoundResources(s.Overhead)
	SyncServiceAccount(s)
}

// SyncServiceAccount keeps the deprecated spec.serviceAccount an alias of
// spec.serviceAccountName, as Kubernetes' v1 conversion does: the new
// field wins; an empty one takes the old's value; the old always echoes
// the new.
func SyncServiceAccount(s *corev1.PodSpec) {
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
}

// DefaultPod adds the defaults that only pods get, not pod templates:
// container requests default to limits, enableServiceLinks, and host ports
// for pods on the host network.
func DefaultPod(p *corev1.Pod) {
	DefaultPodSpec(&p.Spec)
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			requestsFromLimits(&cs[i].Resources)
		}
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = new(corev1.DefaultEnableServiceLinks)
	}
	if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		// As kube-apiserver's pod defaults: a negative grace period (which
		// templates may keep) becomes the shortest one, 1 s.
		p.Spec.TerminationGracePeriodSeconds = new(int64(1))
	}
	if p.Spec.HostNetwork {
		for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
}

func requestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			defaultFieldRef(vf.FieldRef)
		}
	}
	RoundResources(c.Resources.Limits)
	RoundResources(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			defaultProbe(p)
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// pullPolicyFor is Always for images tagged (or defaulting to) "latest",
// IfNotPresent otherwise (a digest without a tag included).
func pullPolicyFor(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// imageTag returns the tag of an image reference: "latest" when it has
// neither tag nor digest, "" when it has a digest only.
func imageTag(image string) string {
	digest := false
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image, digest = image[:i], true
	}
	slash := strings.LastIndexByte(image, '/')
	if colon := strings.LastIndexByte(image, ':'); colon > slash {
		return image[colon+1:]
	}
	if digest {
		return ""
	}
	return "latest"
}

func defaultProbe(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultFieldRef(f *corev1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

func defaultVolume(v *corev1.Volume) {
	vs := &v.VolumeSource
	if volumeSourceCount(vs) == 0 {
		vs.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if vs.HostPath != nil && vs.HostPath.Type == nil {
		vs.HostPath.Type = new(corev1.HostPathUnset)
	}
	if vs.Secret != nil && vs.Secret.DefaultMode == nil {
		vs.Secret.DefaultMode = new(corev1.SecretVolumeSourceDefaultMode)
	}
	if vs.ConfigMap != nil && vs.ConfigMap.DefaultMode == nil {
		vs.ConfigMap.DefaultMode = new(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := vs.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = new(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range d.Items {
			defaultFieldRef(d.Items[i].FieldRef)
		}
	}
	if p := vs.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = new(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			defaultProjection(&p.Sources[i])
		}
	}
	if e := vs.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		spec := &e.VolumeClaimTemplate.Spec
		if spec.VolumeMode == nil {
			spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
		}
		RoundResources(spec.Resources.Limits)
		RoundResources(spec.Resources.Requests)
	}
	if img := vs.Image; img != nil && img.PullPolicy == "" {
		img.PullPolicy = pullPolicyFor(img.Reference)
	}
	defaultLegacySources(vs)
}

func defaultProjection(p *corev1.VolumeProjection) {
	if d := p.DownwardAPI; d != nil {
		for i := range d.Items {
			defaultFieldRef(d.Items[i].FieldRef)
		}
	}
	if t := p.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
		t.ExpirationSeconds = new(int64(3600))
	}
}

// volumeSourceCount returns how many volume types a VolumeSource sets
// (each is a pointer field; exactly one is valid).
func volumeSourceCount(vs *corev1.VolumeSource) int {
	v := reflect.ValueOf(vs).Elem()
	n := 0
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

// RoundResources rounds quantities up to milli-units, as Kubernetes does
// when it decodes a resource list.
func RoundResources(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(-3)
		l[name] = q
	}
}
