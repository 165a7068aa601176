package core

import (
	"context"
	"fmt"
	"net"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// nodeProxySubresource is nodes/proxy: requests forwarded to the node's
// kubelet ("node" or "node:<kubelet port>", with the API server's client
// certificate) or to another port of the node ("[scheme:]node:port").
func nodeProxySubresource() registry.Subresource {
	return registry.Subresource{
		Name: "proxy", Kind: corev1.SchemeGroupVersion.WithKind("NodeProxyOptions"), Verbs: proxyVerbs,
		Connect: &registry.Connect{
			Methods: proxyMethods, Subpath: true,
			NewOptions: func() runtime.Object { return &corev1.NodeProxyOptions{} },
			Location:   nodeProxyLocation,
		},
	}
}

var nodesGR = nodesGVR.GroupResource()

// nodeProxyLocation resolves the node's kubelet as logs and exec do, and
// refuses, as kube-apiserver does, a node whose address is not global
// unicast (a 400 "address not allowed").
func nodeProxyLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.NodeProxyOptions)
	if !ok {
		return nil, errNoOptions
	}
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(req.Name)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", req.Name))
	}
	k, err := kubeletOf(ctx, env, name, nodesGR)
	if err != nil {
		return nil, err
	}
	if err := checkProxyable(ctx, k.host); err != nil {
		return nil, err
	}
	p := proxyPath(req.Subpath, o.Path)
	if port == "" || port == k.port {
		return &registry.Location{URL: k.url(p, ""), Transport: env.NodeTransport()}, nil
	}
	return &registry.Location{URL: &url.URL{Scheme: scheme, Host: net.JoinHostPort(k.host, port), Path: p}}, nil
}
