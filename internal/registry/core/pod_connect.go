package core

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/setpoint-dev/setpoint/internal/registry"
)

// The pods subresources that reach the pod's node or the pod itself, as
// kube-apiserver serves them: pods/log streamed from the kubelet's
// /containerLogs, exec and attach and portforward forwarded (upgrades
// only) to /exec, /attach and /portForward, proxy forwarded to the pod's
// IP.

var (
	podLogOptionsGK = schema.GroupKind{Kind: "PodLogOptions"}
	podGVK          = corev1.SchemeGroupVersion.WithKind("Pod")
)

// podConnectSubresources are pods/attach, exec, log, portforward and proxy.
func podConnectSubresources() []registry.Subresource {
	gvk := func(kind string) schema.GroupVersionKind { return corev1.SchemeGroupVersion.WithKind(kind) }
	return []registry.Subresource{
		{Name: "attach", Kind: gvk("PodAttachOptions"), Verbs: upgradeVerbs, Connect: &registry.Connect{
			Methods: upgradeMethods, UpgradeRequired: true,
			NewOptions: func() runtime.Object { return &corev1.PodAttachOptions{} },
			Location:   attachLocation,
		}},
		{Name: "exec", Kind: gvk("PodExecOptions"), Verbs: upgradeVerbs, Connect: &registry.Connect{
			Methods: upgradeMethods, UpgradeRequired: true,
			NewOptions: func() runtime.Object { return &corev1.PodExecOptions{} },
			Location:   execLocation,
		}},
		{Name: "log", Kind: podGVK, Verbs: []string{"get"}, Connect: &registry.Connect{
			Methods: []string{http.MethodGet}, Stream: true,
			NewOptions: func() runtime.Object { return &corev1.PodLogOptions{} },
			Location:   logLocation,
		}},
		{Name: "portforward", Kind: gvk("PodPortForwardOptions"), Verbs: upgradeVerbs, Connect: &registry.Connect{
			Methods: upgradeMethods, UpgradeRequired: true,
			NewOptions: func() runtime.Object { return &corev1.PodPortForwardOptions{} },
			Location:   portForwardLocation,
		}},
		{Name: "proxy", Kind: gvk("PodProxyOptions"), Verbs: proxyVerbs, Connect: &registry.Connect{
			Methods: proxyMethods, Subpath: true,
			NewOptions: func() runtime.Object { return &corev1.PodProxyOptions{} },
			Location:   podProxyLocation,
		}},
	}
}

// getPod reads the pod a request names.
func getPod(ctx context.Context, env registry.Env, namespace, name string) (*corev1.Pod, error) {
	obj, err := env.Objects(podsGVR).Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// validatePodLogOptions is kube-apiserver's check of log options (split
// streams are off: stream may not be set).
func validatePodLogOptions(o *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if o.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}

// logLocation is /containerLogs/{ns}/{pod}/{container} on the pod's
// kubelet with the options as the kubelet takes them; a pod not yet on a
// node has no location (the server answers 204, as kube-apiserver).
func logLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.PodLogOptions)
	if !ok {
		return nil, errNoOptions
	}
	if errs := validatePodLogOptions(o); len(errs) > 0 {
		return nil, apierrors.NewInvalid(podLogOptionsGK, req.Name, errs)
	}
	pod, err := getPod(ctx, env, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	container, err := podContainer(pod, o.Container)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	k, err := kubeletOf(ctx, env, pod.Spec.NodeName, podsGR)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setFlag(q, "follow", "true", o.Follow)
	setFlag(q, "previous", "true", o.Previous)
	setFlag(q, "timestamps", "true", o.Timestamps)
	if o.SinceSeconds != nil {
		q.Set("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
	}
	if o.SinceTime != nil {
		q.Set("sinceTime", o.SinceTime.Format(time.RFC3339))
	}
	if o.TailLines != nil {
		q.Set("tailLines", strconv.FormatInt(*o.TailLines, 10))
	}
	if o.LimitBytes != nil {
		q.Set("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
	}
	u := k.url(fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container), q.Encode())
	return &registry.Location{URL: u, Transport: env.NodeTransport(), Flush: o.Follow}, nil
}

func setFlag(q url.Values, key, value string, on bool) {
	if on {
		q.Set(key, value)
	}
}

// streamParams are the exec and attach options as the kubelet takes them.
func streamParams(stdin, stdout, stderr, tty bool, command []string) string {
	q := url.Values{}
	setFlag(q, corev1.ExecStdinParam, "1", stdin)
	setFlag(q, corev1.ExecStdoutParam, "1", stdout)
	setFlag(q, corev1.ExecStderrParam, "1", stderr)
	setFlag(q, corev1.ExecTTYParam, "1", tty)
	for _, c := range command {
		q.Add("command", c)
	}
	return q.Encode()
}

func execLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.PodExecOptions)
	if !ok {
		return nil, errNoOptions
	}
	return streamLocation(ctx, env, req, "exec", o.Container, streamParams(o.Stdin, o.Stdout, o.Stderr, o.TTY, o.Command))
}

func attachLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.PodAttachOptions)
	if !ok {
		return nil, errNoOptions
	}
	return streamLocation(ctx, env, req, "attach", o.Container, streamParams(o.Stdin, o.Stdout, o.Stderr, o.TTY, nil))
}

// streamLocation is /{exec,attach}/{ns}/{pod}/{container} on the pod's
// kubelet; a pod not yet on a node is a 400.
func streamLocation(ctx context.Context, env registry.Env, req registry.Request, kind, container, query string) (*registry.Location, error) {
	pod, err := getPod(ctx, env, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	if container, err = podContainer(pod, container); err != nil {
		return nil, err
	}
	k, err := kubeletOfPod(ctx, env, pod)
	if err != nil {
		return nil, err
	}
	u := k.url(fmt.Sprintf("/%s/%s/%s/%s", kind, pod.Namespace, pod.Name, container), query)
	return &registry.Location{URL: u, Transport: env.NodeTransport()}, nil
}

// kubeletOfPod is the kubelet of the pod's node; a pod not yet on a node
// is a 400.
func kubeletOfPod(ctx context.Context, env registry.Env, pod *corev1.Pod) (kubelet, error) {
	if pod.Spec.NodeName == "" {
		return kubelet{}, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	return kubeletOf(ctx, env, pod.Spec.NodeName, podsGR)
}

// portForwardLocation is /portForward/{ns}/{pod}?port=p1,p2 on the pod's
// kubelet.
func portForwardLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.PodPortForwardOptions)
	if !ok {
		return nil, errNoOptions
	}
	pod, err := getPod(ctx, env, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	k, err := kubeletOfPod(ctx, env, pod)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if len(o.Ports) > 0 {
		ports := make([]string, len(o.Ports))
		for i, p := range o.Ports {
			ports[i] = strconv.Itoa(int(p))
		}
		q.Set(corev1.PortHeader, strings.Join(ports, ","))
	}
	u := k.url(fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name), q.Encode())
	return &registry.Location{URL: u, Transport: env.NodeTransport()}, nil
}

// podProxyLocation is the pod's IP, at the port the request names
// ("[scheme:]pod[:port]") or the first container port declared; only a
// global unicast pod IP is reached.
func podProxyLocation(ctx context.Context, env registry.Env, req registry.Request, opts runtime.Object) (*registry.Location, error) {
	o, ok := opts.(*corev1.PodProxyOptions)
	if !ok {
		return nil, errNoOptions
	}
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(req.Name)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", req.Name))
	}
	pod, err := getPod(ctx, env, req.Namespace, name)
	if err != nil {
		return nil, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	ip := net.ParseIP(firstPodIP(&pod.Status))
	if ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	host := ip.String()
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if ip.To4() == nil {
		host = "[" + host + "]"
	}
	return &registry.Location{URL: &url.URL{Scheme: scheme, Host: host, Path: proxyPath(req.Subpath, o.Path)}}, nil
}

// firstPodIP is the first of status.podIPs, as kube-apiserver's proxy
// reads it.
func firstPodIP(s *corev1.PodStatus) string {
	if len(s.PodIPs) > 0 {
		return s.PodIPs[0].IP
	}
	return ""
}
