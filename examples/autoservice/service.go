package autoservice

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The names this controller reads and writes.
const (
	// Annotation on a Deployment: the value "true" asks for a Service;
	// anything else (or no annotation) asks for none.
	Annotation = "auto-service"
	// ServiceSuffix is appended to the Deployment's name to name its
	// Service.
	ServiceSuffix = "-service"
	// ManagedByLabel is set on every Service this controller writes, with
	// the value ManagedBy.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "auto-service"
	// DefaultPort is the Service port (and target port) used when no
	// container of the pod template declares a port.
	DefaultPort = 80
)

// ErrInvalidDeployment is wrapped by DesiredService's errors: the
// Deployment cannot be given a Service (no matchLabels, or a name that
// makes an invalid Service name). Retrying does not help; a change to the
// Deployment does.
var ErrInvalidDeployment = errors.New("deployment cannot have an auto-service")

// Wants reports whether d asks for a Service: annotation "true".
func Wants(d *appsv1.Deployment) bool { return d.Annotations[Annotation] == "true" }

// ServiceName is the name of the Service of the Deployment named
// deployment.
func ServiceName(deployment string) string { return deployment + ServiceSuffix }

// DesiredService returns the spec and labels the Service of d must have:
// type ClusterIP, selector = d's spec.selector.matchLabels, one port per
// distinct (containerPort, protocol) of the pod template's containers (port
// and targetPort both the containerPort, name and protocol kept; TCP when
// unset) or port 80 when there is none. When there are several ports,
// unnamed ones are named "<protocol>-<port>" (a Service with several
// ports needs a unique name on each). It does not set the owner
// reference. The result is a fresh object that shares nothing with d.
func DesiredService(d *appsv1.Deployment) (*corev1.Service, error) {
	name := ServiceName(d.Name)
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return nil, fmt.Errorf("%w: service name %q: %s", ErrInvalidDeployment, name, strings.Join(errs, "; "))
	}
	if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 {
		return nil, fmt.Errorf("%w: spec.selector has no matchLabels, which a Service selector needs", ErrInvalidDeployment)
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: d.Namespace,
			Labels:    map[string]string{ManagedByLabel: ManagedBy},
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: maps.Clone(d.Spec.Selector.MatchLabels),
			Ports:    servicePorts(d.Spec.Template.Spec.Containers),
		},
	}, nil
}

// servicePorts maps the containers' ports to Service ports.
func servicePorts(containers []corev1.Container) []corev1.ServicePort {
	type key struct {
		port  int32
		proto corev1.Protocol
	}
	seen := map[key]bool{}
	var ports []corev1.ServicePort
	for _, c := range containers {
		for _, cp := range c.Ports {
			proto := cp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			k := key{cp.ContainerPort, proto}
			if cp.ContainerPort <= 0 || seen[k] {
				continue
			}
			seen[k] = true
			ports = append(ports, corev1.ServicePort{Name: cp.Name, Protocol: proto, Port: cp.ContainerPort,
				TargetPort: intstr.FromInt32(cp.ContainerPort)})
		}
	}
	if len(ports) == 0 {
		return []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: DefaultPort, TargetPort: intstr.FromInt32(DefaultPort)}}
	}
	if len(ports) > 1 {
		nameMissing(ports)
	}
	return ports
}

// nameMissing gives every unnamed or duplicate-named port the name
// "<protocol>-<port>".
func nameMissing(ports []corev1.ServicePort) {
	used := map[string]bool{}
	for i := range ports {
		if ports[i].Name != "" && !used[ports[i].Name] {
			used[ports[i].Name] = true
			continue
		}
		ports[i].Name = ""
	}
	for i := range ports {
		if ports[i].Name != "" {
			continue
		}
		base := fmt.Sprintf("%s-%d", strings.ToLower(string(ports[i].Protocol)), ports[i].Port)
		name := base
		for n := 2; used[name]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		used[name] = true
		ports[i].Name = name
	}
}
