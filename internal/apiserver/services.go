package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/allocator"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Kubernetes' defaults for the service ranges.
const (
	ServiceCIDR       = "10.96.0.0/12"
	kubernetesService = "10.96.0.1"
)

var nodePorts = allocator.Ports{Min: 30000, Max: 32767}

// serviceAllocators assign cluster IPs and node ports to services.
type serviceAllocators struct {
	ips, ports *allocator.Allocator
}

func newServiceAllocators(kv storage.Store) *serviceAllocators {
	cidr, err := allocator.ParseCIDR(ServiceCIDR)
	if err != nil {
		panic(err) // a constant
	}
	return &serviceAllocators{
		ips:   allocator.New(kv, "/registry/ranges/serviceips/", cidr),
		ports: allocator.New(kv, "/registry/ranges/servicenodeports/", nodePorts),
	}
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

func needsNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// allocate gives svc a cluster IP and node ports (or claims the ones it
// names). The returned undo releases them.
func (a *serviceAllocators) allocate(ctx context.Context, svc *corev1.Service) (func(), error) {
	owner := svc.Namespace + "/" + svc.Name
	var taken []func()
	undo := func() {
		for _, f := range taken {
			f()
		}
	}
	fail := func(err error) (func(), error) { undo(); return nil, err }
	if needsClusterIP(svc) {
		ip, err := claimOrAllocate(ctx, a.ips, svc.Spec.ClusterIP, owner, field.NewPath("spec", "clusterIP"))
		if err != nil {
			return fail(err)
		}
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		taken = append(taken, func() { _ = a.ips.Release(context.Background(), ip) })
	}
	if needsNodePorts(svc) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			want := ""
			if p.NodePort != 0 {
				want = strconv.Itoa(int(p.NodePort))
			}
			v, err := claimOrAllocate(ctx, a.ports, want, owner, field.NewPath("spec", "ports").Index(i).Child("nodePort"))
			if err != nil {
				return fail(err)
			}
			n, _ := strconv.Atoi(v)
			p.NodePort = int32(n)
			taken = append(taken, func() { _ = a.ports.Release(context.Background(), v) })
		}
	}
	return undo, nil
}

func claimOrAllocate(ctx context.Context, a *allocator.Allocator, want, owner string, path *field.Path) (string, error) {
	if want == "" {
		v, err := a.Allocate(ctx, owner)
		if errors.Is(err, allocator.ErrFull) {
			return "", apierrors.NewInternalError(fmt.Errorf("%s: no free values left in the range", path))
		}
		return v, err
	}
	switch err := a.Claim(ctx, want, owner); {
	case errors.Is(err, allocator.ErrTaken):
		return "", apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), owner,
			field.ErrorList{field.Invalid(path, want, "provided value is already allocated")})
	case errors.Is(err, allocator.ErrOutOfRange):
		return "", apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), owner,
			field.ErrorList{field.Invalid(path, want, "provided value is not in the valid range")})
	case err != nil:
		return "", apierrors.NewInternalError(err)
	}
	return want, nil
}

// release frees what a deleted service held.
func (a *serviceAllocators) release(ctx context.Context, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	if needsClusterIP(svc) && svc.Spec.ClusterIP != "" {
		_ = a.ips.Release(ctx, svc.Spec.ClusterIP)
	}
	if needsNodePorts(svc) {
		for _, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				_ = a.ports.Release(ctx, strconv.Itoa(int(p.NodePort)))
			}
		}
	}
}
