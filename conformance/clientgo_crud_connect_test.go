package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/util/retry"
)

// The resize subresource and the connect subresources of the CRUD rows.
// resize goes through the client under test (the typed clientset's
// UpdateResize, the dynamic client's update of "resize"). The dynamic
// client offers no connect calls, so log, exec, attach, portforward and
// proxy go the one way client-go offers in both rows: the clientset's
// GetLogs and ProxyGet, remotecommand and portforward over SPDY. No node
// serves the rows' objects (there is none in the rows' cluster), so the
// connect flows check what kube-apiserver v1.37.2 answers then, which a
// client sees before any node is reached.

// connectPod creates a pod no node runs, for one connect flow.
func connectPod(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps, name string) {
	t.Helper()
	if _, err := ops.create(ctx, c.newObj(name, nil)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		err := env.cs.CoreV1().Pods(crudNamespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete pod %s: %v", name, err)
		}
	})
}

// wantAnswer fails unless a request was refused with a Status of code,
// reason and message. Both kube-apiserver and setpoint send the Status of
// these connect subresources' refusals in a form client-go does not
// decode (its error then names only the code), so the body is read here.
func wantAnswer(t *testing.T, what string, body []byte, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("%s: want a %d %q, got %v", what, code, message, err)
	}
	var got metav1.Status
	if jerr := json.Unmarshal(body, &got); jerr != nil || got.Kind != "Status" {
		t.Fatalf("%s: the answer is no Status (%v): %q", what, jerr, body)
	}
	if st.Status().Code != code || got.Code != code || got.Reason != reason || got.Message != message {
		t.Fatalf("%s: got %d %+v, want %d %s %q", what, st.Status().Code, got, code, reason, message)
	}
}

// resizeFlow changes a running pod's CPU request through resize; resize
// ignores other changes (the image) and refuses a change of the pod's QoS
// class and a request over its limit, leaving the pod as it was.
func resizeFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	pod := c.newObj("obj-resize", nil).(*corev1.Pod)
	q := resource.MustParse
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("64Mi")},
	}
	if _, err := ops.create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	defer forceDeletePod(t, ctx, ops, "obj-resize")
	get := func() *corev1.Pod {
		t.Helper()
		o, err := ops.get(ctx, "obj-resize")
		if err != nil {
			t.Fatal(err)
		}
		return o.(*corev1.Pod)
	}

	// (on a reference cluster the scheduler writes the pod's status
	// meanwhile: a conflict is retried)
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := get()
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = q("150m")
		p.Spec.Containers[0].Image = "nginx:1.28"
		var err error
		out, err = ops.actions.updateResize(ctx, p)
		return err
	})
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	if r := out.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; r.String() != "150m" {
		t.Errorf("cpu request after resize: %s, want 150m", r.String())
	}
	if img := out.Spec.Containers[0].Image; img != "nginx:1.27" {
		t.Errorf("resize changed the image to %s", img)
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := get()
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		_, err := ops.actions.updateResize(ctx, p)
		return err
	})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec") || !hasCause(err, "spec.containers[0].resources.requests") ||
		!hasCause(err, "spec.containers[0].resources.limits") {
		t.Fatalf("resize to BestEffort: want 422 on spec (QoS class) and the removed requests and limits, got %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := get()
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = q("50m")
		_, err := ops.actions.updateResize(ctx, p)
		return err
	})
	if !apierrors.IsInvalid(err) || !hasCause(err, "spec.containers[0].resources.requests") {
		t.Fatalf("resize a limit under the request: want 422 on spec.containers[0].resources.requests, got %v", err)
	}
	if r := get().Spec.Containers[0].Resources; r.Requests.Cpu().String() != "150m" || r.Limits.Cpu().String() != "200m" {
		t.Errorf("resources after the refused resizes: %v", r)
	}
}

// logFlow reads the log of a pod no node runs (empty) and of a container
// the pod does not have (400).
func logFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	connectPod(t, ctx, env, c, ops, "obj-log")
	pods := env.cs.CoreV1().Pods(crudNamespace)
	out, err := pods.GetLogs("obj-log", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || len(out) != 0 {
		t.Fatalf("log of a pod without a node: %q %v, want an empty log", out, err)
	}
	out, err = pods.GetLogs("obj-log", &corev1.PodLogOptions{Container: "nope"}).DoRaw(ctx)
	wantAnswer(t, "log of a missing container", out, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "container nope is not valid for pod obj-log")
}

// streamOn runs remotecommand over SPDY on a pod's exec or attach.
func streamOn(ctx context.Context, env crudEnv, pod, sub string, opts *corev1.PodExecOptions) error {
	req := env.cs.CoreV1().RESTClient().Post().Namespace(crudNamespace).Resource("pods").Name(pod).SubResource(sub).
		VersionedParams(opts, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(env.cfg, http.MethodPost, req.URL())
	if err != nil {
		return err
	}
	var stdout, stderr bytes.Buffer
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
}

// wantUpgradeRefused fails unless a stream upgrade was refused with
// message (client-go's SPDY upgrader reports the refusal's text body).
func wantUpgradeRefused(t *testing.T, what string, err error, message string) {
	t.Helper()
	if err == nil || err.Error() != "unable to upgrade connection: "+message {
		t.Fatalf("%s: got %v, want the upgrade refused with %q", what, err, message)
	}
}

// execFlow: exec in a pod no node runs is a 400 naming the pod.
func execFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	connectPod(t, ctx, env, c, ops, "obj-exec")
	err := streamOn(ctx, env, "obj-exec", "exec", &corev1.PodExecOptions{Container: "c", Command: []string{"true"}, Stdout: true, Stderr: true})
	wantUpgradeRefused(t, "exec", err, "pod obj-exec does not have a host assigned")
	err = streamOn(ctx, env, "obj-exec", "exec", &corev1.PodExecOptions{Container: "nope", Command: []string{"true"}, Stdout: true})
	wantUpgradeRefused(t, "exec in a missing container", err, "container nope is not valid for pod obj-exec")
}

// attachFlow: attach to a pod no node runs is a 400 naming the pod.
func attachFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	connectPod(t, ctx, env, c, ops, "obj-attach")
	err := streamOn(ctx, env, "obj-attach", "attach", &corev1.PodExecOptions{Container: "c", Stdout: true, Stderr: true})
	wantUpgradeRefused(t, "attach", err, "pod obj-attach does not have a host assigned")
}

// portForwardProtocolV1 is the stream protocol client-go's portforward
// package asks for (its PortForwardProtocolV1Name).
const portForwardProtocolV1 = "portforward.k8s.io"

// portForwardFlow: client-go's port-forward dialer to a pod no node runs
// gets a 400 naming the pod.
func portForwardFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	connectPod(t, ctx, env, c, ops, "obj-portforward")
	transport, upgrader, err := spdy.RoundTripperFor(env.cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := env.cs.CoreV1().RESTClient().Post().Namespace(crudNamespace).Resource("pods").Name("obj-portforward").SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	conn, _, err := dialer.Dial(portForwardProtocolV1)
	if err == nil {
		_ = conn.Close()
	}
	wantUpgradeRefused(t, "port-forward", err, "pod obj-portforward does not have a host assigned")
}

// proxyFlow proxies to a pod without an address (400), a service without
// endpoints (503) and a node without addresses (500).
func proxyFlow(t *testing.T, ctx context.Context, env crudEnv, c crudCase, ops crudOps) {
	core := env.cs.CoreV1()
	switch c.gvr.Resource {
	case "pods":
		connectPod(t, ctx, env, c, ops, "obj-proxy")
		body, err := core.Pods(crudNamespace).ProxyGet("", "obj-proxy", "", "/", nil).DoRaw(ctx)
		wantAnswer(t, "proxy to a pod without an address", body, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "address not allowed")
	case "services":
		if _, err := ops.create(ctx, c.newObj("obj-proxy", nil)); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := ops.delete(ctx, "obj-proxy", metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}()
		// (on a reference cluster the endpoints controller writes the
		// service's empty Endpoints shortly after)
		var body []byte
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			body, err = core.Services(crudNamespace).ProxyGet("", "obj-proxy", "80", "/", nil).DoRaw(ctx)
			if !apierrors.IsNotFound(err) || !strings.Contains(string(body), "endpoints") {
				break
			}
		}
		wantAnswer(t, "proxy to a service without endpoints", body, err, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, `no endpoints available for service "obj-proxy"`)
	case "nodes":
		if _, err := ops.create(ctx, c.newObj("obj-proxy", nil)); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := ops.delete(ctx, "obj-proxy", metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}()
		body, err := core.RESTClient().Get().Resource("nodes").Name("obj-proxy").SubResource("proxy").Suffix("/").DoRaw(ctx)
		wantAnswer(t, "proxy to a node without addresses", body, err, http.StatusInternalServerError, "", "no preferred addresses found; known addresses: []")
	default:
		t.Fatalf("no proxy flow for %s", c.gvr.Resource)
	}
}
