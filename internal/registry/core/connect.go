package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// What the connect subresources share (pods/log, exec, attach,
// portforward, proxy; nodes/proxy; services/proxy): how kube-apiserver
// finds a node's kubelet, picks a container, and decides which addresses a
// proxy may reach.

var nodesGVR = corev1.SchemeGroupVersion.WithResource("nodes")

// Kubelet connection defaults of kube-apiserver.
const (
	kubeletScheme      = "https"
	defaultKubeletPort = 10250
)

// preferredAddressTypes is kube-apiserver's default
// --kubelet-preferred-address-types.
var preferredAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP,
}

// proxyMethods are the methods kube-apiserver proxies; upgradeMethods those
// of exec, attach and portforward.
var (
	proxyMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodHead, http.MethodOptions}
	upgradeMethods = []string{http.MethodGet, http.MethodPost}
	proxyVerbs     = []string{"create", "delete", "get", "patch", "update"}
	upgradeVerbs   = []string{"create", "get"}
)

// kubelet is where a node's kubelet listens.
type kubelet struct {
	host, port string
}

// url is the kubelet URL of p with the encoded query q.
func (k kubelet) url(p, q string) *url.URL {
	return &url.URL{Scheme: kubeletScheme, Host: net.JoinHostPort(k.host, k.port), Path: p, RawQuery: q}
}

// kubeletOf resolves a node's kubelet endpoint as kube-apiserver does: the
// first address of the preferred types, the port of
// status.daemonEndpoints.kubeletEndpoint (10250 when unset). A missing node
// is a NotFound naming it as notFound's resource (kube-apiserver's pod
// subresources say `pods "<node>" not found`); a node with no usable
// address is a 500.
func kubeletOf(ctx context.Context, env registry.Env, nodeName string, notFound schema.GroupResource) (kubelet, error) {
	obj, err := env.Objects(nodesGVR).Get(ctx, "", nodeName)
	if apierrors.IsNotFound(err) {
		return kubelet{}, apierrors.NewNotFound(notFound, nodeName)
	}
	if err != nil {
		return kubelet{}, err
	}
	node := obj.(*corev1.Node)
	host, err := preferredAddress(node)
	if err != nil {
		return kubelet{}, err
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = defaultKubeletPort
	}
	return kubelet{host: host, port: strconv.Itoa(port)}, nil
}

// preferredAddress is the node's first address of the most preferred type
// it has.
func preferredAddress(node *corev1.Node) (string, error) {
	for _, t := range preferredAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return a.Address, nil
			}
		}
	}
	return "", unknownError(fmt.Sprintf("no preferred addresses found; known addresses: %v", node.Status.Addresses))
}

// unknownError is a 500 without a reason, as kube-apiserver sends an error
// that is not an API error.
func unknownError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}

// podContainer picks the container a request names, as kube-apiserver
// does: the only container when none is named; a named one must be an
// init, regular or ephemeral container of the pod.
func podContainer(pod *corev1.Pod, name string) (string, error) {
	var all []string
	for _, c := range pod.Spec.InitContainers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		all = append(all, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		all = append(all, c.Name)
	}
	if name != "" {
		for _, n := range all {
			if n == name {
				return name, nil
			}
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, all))
}

// checkProxyable refuses, as kube-apiserver does, a proxy to a host that
// resolves to anything but global unicast addresses (loopback, link-local,
// unspecified): a 400 "address not allowed".
func checkProxyable(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	switch {
	case err != nil:
		return apierrors.NewBadRequest(err.Error())
	case len(addrs) == 0:
		return apierrors.NewBadRequest("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return apierrors.NewBadRequest("address not allowed")
		}
	}
	return nil
}

// proxyPath is the backend path of a proxy request: the request's subpath,
// else the options' path.
func proxyPath(subpath, optPath string) string {
	p := subpath
	if p == "" {
		p = optPath
	}
	if p == "" {
		return ""
	}
	trailing := strings.HasSuffix(p, "/")
	p = path.Join("/", p)
	if trailing && p != "/" {
		p += "/"
	}
	return p
}

// errNoOptions is returned when a connect hook gets options of a type it
// does not take (a programming error).
var errNoOptions = errors.New("connect: unexpected options type")
