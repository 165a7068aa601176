package nodeagent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The kubelet endpoint every node of the agent reports (one HTTPS listener
// for all of them): what the API server reaches for pods/log, exec,
// attach, portforward and nodes/proxy. Clients must present a certificate
// signed by Options.ClientCA (the API server's kubelet client
// certificate); anything else is a 401, as a kubelet with x509
// authentication answers. Paths are the kubelet's.

// endpoint is the agent's kubelet listener.
type endpoint struct {
	ln   net.Listener
	srv  *http.Server
	ip   string
	port int32
}

// listen opens the kubelet endpoint on Options.ServingAddress and decides
// the address the nodes report.
func (a *Agent) listen() (*endpoint, error) {
	ln, err := net.Listen("tcp", a.opts.ServingAddress)
	if err != nil {
		return nil, fmt.Errorf("nodeagent: kubelet endpoint: %w", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ip := a.opts.AdvertiseAddress
	if ip == "" {
		ip = advertisedIP(addr.IP)
	}
	cert, err := selfSignedCert(ip)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("nodeagent: kubelet serving certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if len(a.opts.ClientCA) > 0 && !pool.AppendCertsFromPEM(a.opts.ClientCA) {
		ln.Close()
		return nil, errors.New("nodeagent: ClientCA holds no PEM certificate")
	}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs: pool, MinVersion: tls.VersionTLS12}
	srv := &http.Server{Handler: a.kubeletHandler(), TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)}
	return &endpoint{ln: tls.NewListener(ln, tlsCfg), srv: srv, ip: ip, port: int32(addr.Port)}, nil
}

// advertisedIP is the address nodes report for a listener on ip: ip
// itself, or for a wildcard listener the first global unicast address of
// the machine (loopback when it has none).
func advertisedIP(ip net.IP) string {
	if !ip.IsUnspecified() {
		return ip.String()
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// serve runs the endpoint until ctx ends, then closes it and every
// connection (log followers end).
func (e *endpoint) serve(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.srv.Serve(e.ln)
	}()
	<-ctx.Done()
	_ = e.srv.Close()
	<-done
}

// Endpoint returns the host:port of the kubelet endpoint the nodes report
// ("" before Start opened it).
func (a *Agent) Endpoint() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kubelet == nil {
		return ""
	}
	return net.JoinHostPort(a.kubelet.ip, strconv.Itoa(int(a.kubelet.port)))
}

// kubeletHandler routes the kubelet paths the agent serves.
func (a *Agent) kubeletHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", a.serveLogs)
	mux.HandleFunc("GET /node/{node}"+resourceMetricsPath, a.serveResourceMetrics)
	mux.HandleFunc("GET "+resourceMetricsPath, a.refuseUnnamedNode)
	for _, p := range []string{"/exec/{ns}/{pod}/{container}", "/exec/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, a.refuse("exec"))
	}
	for _, p := range []string{"/attach/{ns}/{pod}/{container}", "/attach/{ns}/{pod}/{uid}/{container}"} {
		mux.HandleFunc(p, a.refuse("attach"))
	}
	for _, p := range []string{"/portForward/{ns}/{pod}", "/portForward/{ns}/{pod}/{uid}"} {
		mux.HandleFunc(p, a.refuse("port-forward"))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// podOf finds a pod the request names on one of this agent's nodes; it
// answers (404, or a dropped connection for a node that stopped, as a dead
// kubelet) and returns nil when there is none to serve.
func (a *Agent) podOf(w http.ResponseWriter, r *http.Request) (*corev1.Pod, *node) {
	ns, name := r.PathValue("ns"), r.PathValue("pod")
	pod, n, err := a.podFor(types.NamespacedName{Namespace: ns, Name: name})
	if err != nil || n == nil {
		writeKubeletError(w, http.StatusNotFound, fmt.Sprintf("pod %q does not exist", name))
		return nil, nil
	}
	if !a.alive(n) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return nil, nil
	}
	return pod, n
}

// writeKubeletError answers an error as the kubelet does: its message as a
// plain body.
func writeKubeletError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg))
}

// refuse answers exec, attach and port-forward: the simulated node runs no
// containers. The answer is a 400 Status, which the API server relays and
// kubectl prints as the error.
func (a *Agent) refuse(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pod, n := a.podOf(w, r)
		if pod == nil {
			return
		}
		st := metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest,
			Message: fmt.Sprintf("%s is not supported on node %s: it is a node simulated by setpoint, whose containers do not run", what, n.name),
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(&st)
	}
}

// serveLogs answers /containerLogs/{ns}/{pod}/{container} with the
// simulated container's log, as the kubelet does: its errors are 400s
// (the container has not started, has no previous run) or 404s (no such
// pod or container).
func (a *Agent) serveLogs(w http.ResponseWriter, r *http.Request) {
	opts, err := parseLogOptions(r, a.clock.Now())
	if err != nil {
		writeKubeletError(w, http.StatusBadRequest, `{"message": "Unable to decode query."}`)
		return
	}
	pod, _ := a.podOf(w, r)
	if pod == nil {
		return
	}
	a.awaitAdoption(r.Context(), pod)
	in, code, msg := a.logOf(pod, r.PathValue("container"), opts.previous)
	if in == nil {
		writeKubeletError(w, code, msg)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	flush()
	a.streamLog(r.Context(), in, &logWriter{w: w, flush: flush, opts: opts})
}

// adoptWait bounds how long a log request waits for the agent to take
// over a pod an earlier agent started.
const adoptWait = 5 * time.Second

// awaitAdoption waits, up to adoptWait, until the agent has taken over a
// pod that an earlier incarnation started (its sandbox has an address):
// right after a restart the workers may not have looked at it yet, and its
// logs are rebuilt from its status then. A kubelet reads them from the
// container runtime at once; here the request waits for the pod's sync,
// which it asks for.
func (a *Agent) awaitAdoption(ctx context.Context, pod *corev1.Pod) {
	if pod.Status.PodIP == "" {
		return
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	deadline := time.Now().Add(adoptWait)
	for {
		a.mu.Lock()
		ps := a.sims[key]
		adopted := ps != nil && ps.uid == pod.UID && ps.started()
		a.mu.Unlock()
		if adopted || !time.Now().Before(deadline) {
			return
		}
		a.queue.Add(key)
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// logOf picks the run whose log a request wants, as the kubelet picks a
// container: the current run (or, while it waits to restart, the one that
// ended), or with previous the run before it.
func (a *Agent) logOf(pod *corev1.Pod, name string, previous bool) (*instance, int, string) {
	if !specHasContainer(pod, name) {
		return nil, http.StatusNotFound, fmt.Sprintf("container %q not found in pod %q", name, pod.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var c *ctrState
	if ps := a.sims[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]; ps != nil && ps.uid == pod.UID {
		c = ps.container(name)
	}
	if c == nil || c.log.latest == nil {
		if previous {
			return nil, http.StatusBadRequest, fmt.Sprintf("previous terminated container %q in pod %q not found", name, pod.Name)
		}
		return nil, http.StatusBadRequest, fmt.Sprintf("container %q in pod %q is waiting to start: ContainerCreating", name, pod.Name)
	}
	waitingRestart := !c.running && c.term == nil && c.last != nil
	switch {
	case !previous, waitingRestart:
		return c.log.latest, 0, ""
	case c.log.previous != nil:
		return c.log.previous, 0, ""
	}
	return nil, http.StatusBadRequest, fmt.Sprintf("previous terminated container %q in pod %q not found", name, pod.Name)
}

func specHasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// parseLogOptions reads the kubelet's containerLogs query parameters.
func parseLogOptions(r *http.Request, now time.Time) (logOptions, error) {
	q := r.URL.Query()
	o := logOptions{tail: -1}
	var err error
	flag := func(key string) bool {
		v := q.Get(key)
		if v == "" {
			return false
		}
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			err = perr
		}
		return b
	}
	num := func(key string) (int64, bool) {
		v := q.Get(key)
		if v == "" {
			return 0, false
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = perr
		}
		return n, true
	}
	o.follow, o.previous, o.timestamps = flag("follow"), flag("previous"), flag("timestamps")
	if n, ok := num("tailLines"); ok {
		o.tail = n
	}
	if n, ok := num("limitBytes"); ok {
		o.limit = n
	}
	if n, ok := num("sinceSeconds"); ok {
		o.since = now.Add(-time.Duration(n) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" {
		t, perr := time.Parse(time.RFC3339, v)
		if perr != nil {
			err = perr
		}
		o.since = t
	}
	return o, err
}
