package webhookclient

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Resolver finds where a Service's traffic goes.
type Resolver interface {
	// ResolveEndpoint returns the host:port of one ready endpoint of the
	// Service's port, or an error worded as kube-apiserver's.
	ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (string, error)
}

// ResolverFunc is a Resolver.
type ResolverFunc func(ctx context.Context, namespace, name string, port int32) (string, error)

// ResolveEndpoint calls f.
func (f ResolverFunc) ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (string, error) {
	return f(ctx, namespace, name, port)
}

var (
	servicesGVR  = corev1.SchemeGroupVersion.WithResource("services")
	endpointsGVR = corev1.SchemeGroupVersion.WithResource("endpoints")
	slicesGVR    = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
)

// EnvResolver resolves through the server's objects, read from its watch
// caches as kube-apiserver reads its informers: the Service, then its
// EndpointSlices, or its Endpoints when it has no slice.
func EnvResolver(env registry.Env) Resolver {
	return ResolverFunc(func(ctx context.Context, namespace, name string, port int32) (string, error) {
		svc, err := getService(ctx, env, namespace, name)
		if err != nil {
			return "", err
		}
		slices, err := listSlices(ctx, env, namespace, name)
		if err != nil {
			return "", err
		}
		var eps *corev1.Endpoints
		if len(slices) == 0 {
			if eps, err = getEndpoints(ctx, env, namespace, name); err != nil {
				return "", err
			}
		}
		all, err := ResolveService(svc, port, slices, eps)
		if err != nil {
			return "", err
		}
		return all[rand.IntN(len(all))], nil
	})
}

func getService(ctx context.Context, env registry.Env, namespace, name string) (*corev1.Service, error) {
	objs := env.Objects(servicesGVR)
	if objs == nil {
		return nil, serviceNotFound(name)
	}
	obj, err := registry.GetCached(ctx, objs, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, serviceNotFound(name)
	}
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("service %s/%s: unexpected %T", namespace, name, obj)
	}
	return svc, nil
}

// serviceNotFound is the error of kube's service lister.
func serviceNotFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "service"}, name)
}

func listSlices(ctx context.Context, env registry.Env, namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	objs := env.Objects(slicesGVR)
	if objs == nil {
		return nil, nil
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	var list []runtime.Object
	var err error
	if cl, ok := objs.(registry.CachedLister); ok {
		list, err = cl.ListCached(ctx, namespace, sel, nil)
	} else {
		list, err = objs.List(ctx, namespace, sel, nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(list))
	for _, o := range list {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func getEndpoints(ctx context.Context, env registry.Env, namespace, name string) (*corev1.Endpoints, error) {
	objs := env.Objects(endpointsGVR)
	if objs == nil {
		return nil, nil
	}
	obj, err := registry.GetCached(ctx, objs, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil // no endpoints available
	}
	if err != nil {
		return nil, err
	}
	eps, _ := obj.(*corev1.Endpoints)
	return eps, nil
}

// ResolveService returns every ready endpoint (host:port) of svc's port:
// from slices, or from eps when there is no slice. Its errors are
// kube-apiserver's (ResolveEndpoints of its proxy utilities).
func ResolveService(svc *corev1.Service, port int32, slices []*discoveryv1.EndpointSlice, eps *corev1.Endpoints) ([]string, error) {
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
			break
		}
	}
	if sp == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	var out []string
	if len(slices) > 0 {
		out = fromSlices(sp.Name, slices)
	} else if eps != nil {
		out = fromEndpoints(sp.Name, eps)
	}
	if len(out) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
	}
	return out, nil
}

// fromSlices lists the ready addresses of the slices' port named
// portName (readiness unknown counts as ready, as kube's consumers read
// it).
func fromSlices(portName string, slices []*discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range slices {
		for _, p := range s.Ports {
			if p.Port == nil || derefName(p.Name) != portName {
				continue
			}
			pn := strconv.Itoa(int(*p.Port))
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, addr := range ep.Addresses {
					out = append(out, net.JoinHostPort(addr, pn))
				}
			}
		}
	}
	return out
}

func derefName(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fromEndpoints lists the ready addresses of eps' port named portName.
func fromEndpoints(portName string, eps *corev1.Endpoints) []string {
	var out []string
	for _, ss := range eps.Subsets {
		for _, p := range ss.Ports {
			if p.Name != portName {
				continue
			}
			pn := strconv.Itoa(int(p.Port))
			for _, a := range ss.Addresses {
				out = append(out, net.JoinHostPort(a.IP, pn))
			}
		}
	}
	return out
}
