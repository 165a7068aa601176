package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// Name is the plugin's name in kube-apiserver's --enable-admission-plugins.
const Name = "NodeRestriction"

const (
	userPrefix     = "system:node:"
	nodesGroup     = "system:nodes"
	leaseNamespace = "kube-node-lease"
)

var (
	podsGVR  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")
)

// Plugin is the NodeRestriction admission plugin; it keeps no state.
type Plugin struct{}

// New returns the plugin.
func New() *Plugin { return &Plugin{} }

// Name is "NodeRestriction".
func (*Plugin) Name() string { return Name }

// nodeOf returns the node a user is the kubelet of and whether it is one.
func nodeOf(u registry.UserInfo) (string, bool) {
	if !strings.HasPrefix(u.Name, userPrefix) || !slices.Contains(u.Groups, nodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, userPrefix), true
}

// check is one decision: the resource refused and why (nil: allowed).
type check struct {
	gr  schema.GroupResource
	err error
}

// Admit lets nodes write only their own objects; see the package
// documentation. It changes nothing and takes nothing (nil Txn).
func (p *Plugin) Admit(ctx context.Context, env registry.Env, a *registry.Attributes) (*registry.Txn, error) {
	user := a.User
	if user.Name == "" {
		user = registry.UserFrom(ctx)
	}
	node, ok := nodeOf(user)
	if !ok {
		return nil, nil
	}
	obj := a.Object
	if obj == nil {
		obj = a.Old
	}
	c := p.decide(ctx, env, node, obj, a)
	if c.err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if errors.As(c.err, &status) {
		return nil, c.err
	}
	return nil, apierrors.NewForbidden(c.gr, nameOf(a, obj), c.err)
}

// decide dispatches on the kind written.
func (p *Plugin) decide(ctx context.Context, env registry.Env, node string, obj runtime.Object, a *registry.Attributes) check {
	if node == "" {
		return check{groupResourceOf(obj), fmt.Errorf("could not determine node from user %q", a.User.Name)}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		return check{podsGVR.GroupResource(), p.pod(ctx, env, node, o, a)}
	case *policyv1.Eviction:
		return check{podsGVR.GroupResource(), p.eviction(ctx, env, node, o, a)}
	case *corev1.Node:
		return check{nodesGVR.GroupResource(), admitNode(node, a)}
	case *corev1.PersistentVolumeClaim:
		return check{schema.GroupResource{Resource: "persistentvolumeclaims"}, admitPVC(node, a)}
	case *authenticationv1.TokenRequest:
		return check{schema.GroupResource{Resource: "serviceaccounts"}, p.token(ctx, env, node, o, a)}
	case *coordinationv1.Lease:
		return check{schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, admitLease(node, o, a)}
	case *storagev1.CSINode:
		return check{schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, admitCSINode(node, o, a)}
	case *resourcev1.ResourceSlice:
		return check{schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}, admitSlice(node, o, a)}
	}
	return check{}
}

func groupResourceOf(obj runtime.Object) schema.GroupResource {
	switch obj.(type) {
	case *corev1.Pod, *policyv1.Eviction:
		return podsGVR.GroupResource()
	case *corev1.Node:
		return nodesGVR.GroupResource()
	}
	return schema.GroupResource{}
}

// nameOf names the object in the error: the request's name, else the
// object's, else "Unknown", as kube's admission errors do.
func nameOf(a *registry.Attributes, obj runtime.Object) string {
	if a.Name != "" {
		return a.Name
	}
	if obj != nil {
		if m, err := meta.Accessor(obj); err == nil && m.GetName() != "" {
			return m.GetName()
		}
	}
	return "Unknown"
}

// getPod reads the named pod; a missing pod is the NotFound error itself.
func getPod(ctx context.Context, env registry.Env, namespace, name string) (*corev1.Pod, error) {
	objs := env.Objects(podsGVR)
	if objs == nil {
		return nil, errors.New("pods are not served")
	}
	o, err := objs.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected type %T", o)
	}
	return pod, nil
}
