package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// serviceProxySubresource is services/proxy: requests forwarded to a ready
// endpoint of the service ("[scheme:]service[:port name or number]").
func serviceProxySubresource() registry.Subresource {
	return registry.Subresource{
		Name: "proxy", Kind: corev1.SchemeGroupVersion.WithKind("ServiceProxyOptions"), Verbs: proxyVerbs,
		Connect: &registry.Connect{
			Methods: proxyMethods, Subpath: true,
			NewOptions: func() runtime.Object { return &corev1.ServiceProxyOptions{} },
			Location:   serviceProxyLocation,
		},
	}
}

var (
	servicesGVR  = corev1.SchemeGroupVersion.WithResource("services")
	endpointsGVR = corev1.SchemeGroupVersion.WithResource("endpoints")
)

// endpoint is one address of a service port.
type endpoint struct {
	ip   string
	port int32
}

// serviceProxyLocation picks a random ready endpoint of the service port
// the request names, as kube-apiserver does, with its messages: a port
// number the service does not have, and a service without ready endpoints,
// are 503s. The endpoints are the service's Endpoints object when the
// server serves endpoints and one exists; otherwise (setpoint runs no
// endpoints controller) they are derived from the service's selector as
// the endpoints controller would: the ready pods it selects, at the target
// port of the service port.
func serviceProxyLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.ServiceProxyOptions)
	if !ok {
		return nil, errNoOptions
	}
	scheme, name, portName, valid := utilnet.SplitSchemeNamePort(req.Name)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", req.Name))
	}
	services := env.Objects(servicesGVR)
	if n, err := strconv.ParseInt(portName, 10, 64); err == nil {
		obj, err := services.Get(ctx, req.Namespace, name)
		if err != nil {
			return nil, err
		}
		if portName, err = servicePortName(obj.(*corev1.Service), n); err != nil {
			return nil, err
		}
	}
	noEndpoints := apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	eps, err := serviceEndpoints(ctx, env, req.Namespace, name, portName)
	switch {
	case err != nil:
		return nil, err
	case eps == nil:
		return nil, noEndpoints
	case len(eps) == 0:
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", req.Name))
	}
	ep := eps[rand.IntN(len(eps))]
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(ep.ip, strconv.Itoa(int(ep.port))), Path: proxyPath(req.Subpath, o.Path)}
	return &registry.Location{URL: u}, nil
}

// servicePortName is the name of the service port numbered n.
func servicePortName(svc *corev1.Service, n int64) (string, error) {
	for _, p := range svc.Spec.Ports {
		if int64(p.Port) == n {
			return p.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, svc.Name))
}

// serviceEndpoints returns the ready endpoints of the service's port named
// portName: nil when the service has no ready address at all, empty when
// it has some but none serves that port.
func serviceEndpoints(ctx context.Context, env registry.Env, namespace, name, portName string) ([]endpoint, error) {
	if objs := env.Objects(endpointsGVR); objs != nil {
		obj, err := objs.Get(ctx, namespace, name)
		switch {
		case err == nil:
			return endpointsPorts(obj.(*corev1.Endpoints), portName), nil
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	obj, err := env.Objects(servicesGVR).Get(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return selectorEndpoints(ctx, env, obj.(*corev1.Service), portName)
}

// endpointsPorts reads an Endpoints object.
func endpointsPorts(eps *corev1.Endpoints, portName string) []endpoint {
	var out []endpoint
	hasAddr := false
	for _, ss := range eps.Subsets {
		hasAddr = hasAddr || len(ss.Addresses) > 0
		for _, p := range ss.Ports {
			if p.Name != portName {
				continue
			}
			for _, a := range ss.Addresses {
				out = append(out, endpoint{ip: a.IP, port: p.Port})
			}
		}
	}
	if !hasAddr {
		return nil
	}
	if out == nil {
		out = []endpoint{}
	}
	return out
}

// selectorEndpoints derives the endpoints from the pods the service
// selects: running, ready, not terminating, with an IP.
func selectorEndpoints(ctx context.Context, env registry.Env, svc *corev1.Service, portName string) ([]endpoint, error) {
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil, nil
	}
	objs, err := env.Objects(podsGVR).List(ctx, svc.Namespace, labels.SelectorFromSet(svc.Spec.Selector), nil)
	if err != nil {
		return nil, err
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == portName {
			sp = &svc.Spec.Ports[i]
		}
	}
	var out []endpoint
	ready := false
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		ip := firstPodIP(&pod.Status)
		if ip == "" || pod.DeletionTimestamp != nil || !podIsReady(pod) {
			continue
		}
		ready = true
		if sp == nil {
			continue
		}
		if port, ok := targetPort(pod, sp); ok {
			out = append(out, endpoint{ip: ip, port: port})
		}
	}
	if !ready {
		return nil, nil
	}
	if out == nil {
		out = []endpoint{}
	}
	return out, nil
}

// podIsReady reports the pod's Ready condition.
func podIsReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// targetPort resolves the service port's target port on the pod: a number,
// or the name of a container port (the pod does not serve the port when it
// has no such port).
func targetPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.IntVal == 0 && tp.StrVal == "":
		return sp.Port, true
	case tp.StrVal == "":
		return tp.IntVal, true
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == tp.StrVal && p.Protocol == sp.Protocol {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}
