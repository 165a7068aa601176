package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/allocator"
	"github.com/setpoint-dev/setpoint/internal/registry"
	"github.com/setpoint-dev/setpoint/internal/storage"
)

// Kubernetes' default service ranges, and the cluster IP of the kubernetes
// service (the first address of the range, which is never handed out).
const (
	ServiceCIDR         = "10.96.0.0/12"
	KubernetesServiceIP = "10.96.0.1"
)

// NodePorts is the default node port range.
var NodePorts = allocator.Ports{Min: 30000, Max: 32767}

// Where the claims of the two ranges live in storage.
const (
	serviceIPsPrefix = "/registry/ranges/serviceips/"
	nodePortsPrefix  = "/registry/ranges/servicenodeports/"
	rangeFull        = "no free values left in the range"
)

type serviceAllocators struct{ ips, ports *allocator.Allocator }

func allocatorsOf(kv storage.Store) serviceAllocators {
	cidr, err := allocator.ParseCIDR(ServiceCIDR)
	if err != nil {
		panic(err) // a constant
	}
	return serviceAllocators{
		ips:   allocator.New(kv, serviceIPsPrefix, cidr),
		ports: allocator.New(kv, nodePortsPrefix, NodePorts),
	}
}

func needsClusterIP(svc *corev1.Service) bool {
	return serviceType(svc) != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

// heldIP is the cluster IP a stored service holds in the range ("" none).
func heldIP(svc *corev1.Service) string {
	if svc == nil || !needsClusterIP(svc) {
		return ""
	}
	return svc.Spec.ClusterIP
}

// heldPorts are the node ports a stored service holds.
func heldPorts(svc *corev1.Service) map[int32]bool {
	held := map[int32]bool{}
	if svc == nil || !needsNodePorts(serviceType(svc)) {
		return held
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			held[p.NodePort] = true
		}
	}
	return held
}

// admitService gives a service the cluster IP and node ports its type
// needs, on create and on update alike (a ClusterIP service changed to
// NodePort gets node ports; one changed to ExternalName gets a cluster IP
// back when it changes again). What it claims is given back by the Txn's
// Revert; what the old object held and the new one no longer uses is
// released by its Commit.
func admitService(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	svc, ok := a.Object.(*corev1.Service)
	if !ok {
		return nil, nil
	}
	defaultAddressing(&svc.Spec)
	old, _ := a.Old.(*corev1.Service)
	alloc := allocatorsOf(env.Storage())
	owner := svc.Namespace + "/" + svc.Name
	var claimed []func()
	revert := func() {
		for _, f := range claimed {
			f()
		}
	}
	fail := func(err error) (*registry.Txn, error) { revert(); return nil, err }

	oldIP, oldPorts := heldIP(old), heldPorts(old)
	if needsClusterIP(svc) && (svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP != oldIP) {
		// As kube-apiserver, whose allocation comes before validation and
		// checks first that the requested addresses are IPs.
		for i, ip := range svc.Spec.ClusterIPs {
			if errs := validation.IsValidIP(field.NewPath("spec", "clusterIPs").Index(i), ip); len(errs) > 0 {
				return fail(apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs))
			}
		}
		ip, err := claimOrAllocate(ctx, alloc.ips, svc.Spec.ClusterIP, owner, svc.Name, field.NewPath("spec", "clusterIP"))
		if err != nil {
			return fail(ipRefusal(err, svc))
		}
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		claimed = append(claimed, func() { _ = alloc.ips.Release(context.Background(), ip) })
	}
	keep := map[int32]bool{}
	if needsNodePorts(serviceType(svc)) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort != 0 && oldPorts[p.NodePort] && !keep[p.NodePort] {
				keep[p.NodePort] = true // already held by this service
				continue
			}
			want := ""
			if p.NodePort != 0 {
				want = strconv.Itoa(int(p.NodePort))
			}
			v, err := claimOrAllocate(ctx, alloc.ports, want, owner, svc.Name, field.NewPath("spec", "ports").Index(i).Child("nodePort"))
			if err != nil {
				return fail(err)
			}
			n, _ := strconv.Atoi(v)
			p.NodePort = int32(n)
			keep[p.NodePort] = true
			claimed = append(claimed, func() { _ = alloc.ports.Release(context.Background(), v) })
		}
	}
	commit := func() {
		if oldIP != "" && heldIP(svc) != oldIP {
			_ = alloc.ips.Release(context.Background(), oldIP)
		}
		for port := range oldPorts {
			if !keep[port] {
				_ = alloc.ports.Release(context.Background(), strconv.Itoa(int(port)))
			}
		}
	}
	return &registry.Txn{Commit: commit, Revert: revert}, nil
}

// claimOrAllocate claims want for owner ("namespace/name"), or allocates
// a value when want is empty; a refusal is the 422 of the service name.
func claimOrAllocate(ctx context.Context, a *allocator.Allocator, want, owner, name string, path *field.Path) (string, error) {
	gk := corev1.SchemeGroupVersion.WithKind("Service").GroupKind()
	if want == "" {
		v, err := a.Allocate(ctx, owner)
		if errors.Is(err, allocator.ErrFull) {
			return "", apierrors.NewInternalError(fmt.Errorf("%s: %s", path, rangeFull))
		}
		return v, err
	}
	switch err := a.Claim(ctx, want, owner); {
	case errors.Is(err, allocator.ErrTaken):
		return "", apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(path, want, "provided value is already allocated")})
	case errors.Is(err, allocator.ErrOutOfRange):
		return "", apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(path, want, "provided value is not in the valid range")})
	case err != nil:
		return "", apierrors.NewInternalError(err)
	}
	return want, nil
}

// releaseService frees what a deleted service held.
func releaseService(ctx context.Context, env registry.Env, obj runtime.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	alloc := allocatorsOf(env.Storage())
	if ip := heldIP(svc); ip != "" {
		_ = alloc.ips.Release(ctx, ip)
	}
	for port := range heldPorts(svc) {
		_ = alloc.ports.Release(ctx, strconv.Itoa(int(port)))
	}
}

// ipRefusal words a refused cluster IP as kube-apiserver's IP allocator
// does: at spec.clusterIPs, the whole list as the value.
func ipRefusal(err error, svc *corev1.Service) error {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Reason != metav1.StatusReasonInvalid {
		return err
	}
	ip := svc.Spec.ClusterIP
	msg := fmt.Sprintf("failed to allocate IP %s: the provided network does not match the current range", ip)
	if d := st.Status().Details; d != nil && len(d.Causes) > 0 && strings.Contains(d.Causes[0].Message, "already allocated") {
		msg = fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", ip)
	}
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
		field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, msg)})
}
