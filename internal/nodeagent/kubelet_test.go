package nodeagent_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// logs returns the lines a pods/log request through the API server
// answers, or its status and body when it fails.
func (e *env) logs(pod, query string) (int, string) {
	e.t.Helper()
	code, body, _ := e.srv.Do(e.t, http.MethodGet, "/api/v1/namespaces/default/pods/"+pod+"/log?"+query, "", nil)
	return code, string(body)
}

// wantLog fails unless the log request answers 200 with want.
func (e *env) wantLog(pod, query, want string) {
	e.t.Helper()
	if code, body := e.logs(pod, query); code != 200 || body != want {
		e.t.Errorf("log %s?%s: %d %q, want %q", pod, query, code, body, want)
	}
}

// statusMessage decodes an error answer's code and message.
func statusMessage(t testing.TB, body string) (int, string) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("not a Status: %s", body)
	}
	return int(st.Code), st.Message
}

func started(c string) string {
	return fmt.Sprintf("[setpoint] container %s started: image busybox (simulated, nothing runs)\n", c)
}
func exited(c string, code int) string {
	return fmt.Sprintf("[setpoint] container %s exited with code %d (Error)\n", c, code)
}

// The nodes report the agent's kubelet endpoint, which only the API
// server's client certificate opens.
func TestKubeletEndpointAuthentication(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 2})
	host, port, _ := net.SplitHostPort(e.agent.Endpoint())
	for _, name := range []string{"node-0", "node-1"} {
		n, err := e.nodes.Get(ctx(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Status.Addresses) != 1 || n.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: host}) ||
			strconv.Itoa(int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)) != port {
			t.Errorf("%s reports %v port %d, want %s:%s", name, n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port, host, port)
		}
	}
	get := func(cert *tls.Certificate) (int, error) {
		cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the endpoint's certificate is self-signed
		if cert != nil {                             // sent even though the endpoint does not name its CA
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + e.agent.Endpoint() + "/healthz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(nil); code != http.StatusUnauthorized {
		t.Errorf("no client certificate: %d, %v; want 401", code, err)
	}
	stranger := strangerCert(t)
	if code, err := get(&stranger); err == nil {
		t.Errorf("a certificate of another CA: %d, want a refused handshake", code)
	}
}

// strangerCert is a self-signed client certificate no cluster CA signed.
func strangerCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// kubectl logs through the API server shows each run of a crashing
// container: started, exited with its code, restarted; --previous the run
// before; -f follows the current run until it ends.
func TestContainerLogs(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 1})
	p := newPod("crash", corev1.RestartPolicyAlways, "app=busybox", "side=busybox")
	p.Annotations = map[string]string{nodeagent.AnnotationCrashAfter: "5s", nodeagent.AnnotationCrashExitCode: "3"}
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	e.createBound(p, "node-0")
	e.waitPod("crash", "running", running)

	e.wantLog("crash", "container=app", started("app"))
	e.wantLog("crash", "container=init", started("init")+"[setpoint] container init exited with code 0 (Completed)\n")
	e.wantLog("crash", "container=app&timestamps=true", "2026-03-01T12:00:00.000000000Z "+started("app"))
	code, body := e.logs("crash", "container=app&previous=true")
	if c, msg := statusMessage(t, body); code != 400 || c != 400 || msg != `previous terminated container "app" in pod "crash" not found` {
		t.Errorf("previous before any restart: %d %s", code, body)
	}

	follow := e.follow("crash", "container=app&follow=true")
	if line := follow.line(t); line != started("app") {
		t.Fatalf("follow: first line %q", line)
	}
	e.clk.Step(5 * time.Second) // the scheduled crash
	if line := follow.line(t); line != "[setpoint] container app exited with code 3 (Error)\n" {
		t.Fatalf("follow: line after the crash %q", line)
	}
	follow.ended(t)
	e.waitPod("crash", "crash-looping", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	crashed := started("app") + "[setpoint] container app exited with code 3 (Error)\n"
	e.wantLog("crash", "container=app", crashed) // waiting to restart: the run that ended
	e.wantLog("crash", "container=app&previous=true", crashed)

	e.clk.Step(10 * time.Second) // the restart back-off
	e.waitPod("crash", "restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Running != nil })
	restarted := "[setpoint] container app restarted (restart 1): image busybox\n"
	e.wantLog("crash", "container=app", restarted)
	e.wantLog("crash", "container=app&previous=true", crashed)
	e.wantLog("crash", "container=app&previous=true&tailLines=1", "[setpoint] container app exited with code 3 (Error)\n")
	e.wantLog("crash", "container=app&previous=true&limitBytes=10", "[setpoint]")
	e.wantLog("crash", "container=app&previous=true&sinceTime=2026-03-01T12:00:01Z", "[setpoint] container app exited with code 3 (Error)\n")
	e.wantLog("crash", "container=app&sinceSeconds=1", restarted)
	e.wantLog("crash", "container=app&previous=true&sinceSeconds=1", "")

	side := e.follow("crash", "container=side&follow=true")
	if line := side.line(t); line != started("side") {
		t.Fatalf("follow side: %q", line)
	}
	if err := e.pods.Namespace("default").Delete(ctx(), "crash", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if line := side.line(t); line != "[setpoint] container side killed: pod deleted\n" {
		t.Errorf("follow side after deletion: %q", line)
	}
	side.ended(t)
}

// Logs of containers that have not run, and exec, attach and port-forward,
// which a simulated node refuses.
func TestKubeletRefusals(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 1, StartDelay: time.Minute})
	e.createBound(newPod("later", corev1.RestartPolicyAlways, "app=busybox"), "node-0")
	// The node answers for the pods it has seen: a log asked before its
	// informer delivers the pod is a 404, as a kubelet's is. Nothing in the
	// pod's status tells when it has (it posts none during StartDelay).
	var code int
	var body string
	eventually(t, "the node knows the pod", func() bool {
		code, body = e.logs("later", "")
		return code != http.StatusNotFound
	})
	if c, msg := statusMessage(t, body); code != 400 || c != 400 || msg != `container "app" in pod "later" is waiting to start: ContainerCreating` {
		t.Errorf("log of a pod not started: %d %s", code, body)
	}
	for _, sub := range []string{"exec?command=sh&stdin=true&stdout=true&tty=true", "attach?stdout=true", "portforward?ports=80"} {
		code, body := e.upgrade("later", sub)
		what := map[string]string{"exec": "exec", "attach": "attach", "portforward": "port-forward"}[strings.Split(sub, "?")[0]]
		want := what + " is not supported on node node-0: it is a node simulated by setpoint, whose containers do not run"
		if c, msg := statusMessage(t, body); code != 400 || c != 400 || msg != want {
			t.Errorf("%s: %d %s", sub, code, body)
		}
	}
	e.agent.StopHeartbeat("node-0")
	code, body = e.logs("later", "")
	if c, msg := statusMessage(t, body); code != 500 || c != 500 || !strings.HasSuffix(msg, ": EOF") {
		t.Errorf("log on a stopped node: %d %s", code, body)
	}
}

// startAgentWithCA starts an agent that trusts the test server's CA.
func (e *env) startAgentWithCA(opts nodeagent.Options) {
	opts.ClientCA = e.srv.API.CA().CertPEM
	e.startAgent(opts)
}

// followed is a streamed log.
type followed struct {
	r    *bufio.Reader
	body io.Closer
}

func (e *env) follow(pod, query string) *followed {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1/namespaces/default/pods/"+pod+"/log?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+e.srv.Token)
	resp, err := e.srv.Client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("follow %s: %d %s", pod, resp.StatusCode, b)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return &followed{r: bufio.NewReader(resp.Body), body: resp.Body}
}

// line reads the next line, failing after 10 s.
func (f *followed) line(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := f.r.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		f.body.Close()
		t.Fatal("no log line within 10s")
	}
	return ""
}

// ended checks that the stream ends.
func (f *followed) ended(t *testing.T) {
	t.Helper()
	if l := f.line(t); l != "" {
		t.Errorf("stream goes on: %q", l)
	}
}

// upgrade sends an upgrade request for a pod subresource through the API
// server and returns the answer.
func (e *env) upgrade(pod, sub string) (int, string) {
	e.t.Helper()
	u, _ := url.Parse(e.srv.URL)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: e.srv.API.CA().Pool(), NextProtos: []string{"http/1.1"}})
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/namespaces/default/pods/%s/%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nContent-Length: 0\r\n\r\n", pod, sub, u.Host, e.srv.Token)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Ephemeral containers added to a pod (kubectl debug) run and log; the
// containers' cpu and memory are reported as the spec has them, and follow
// a resize.
func TestEphemeralContainersAndResize(t *testing.T) {
	e := newEnv(t, testserver.Start(t, testserver.Options{}))
	e.startAgentWithCA(nodeagent.Options{Count: 1})
	p := newPod("web", corev1.RestartPolicyAlways, "app=busybox")
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	e.createBound(p, "node-0")
	got := e.waitPod("web", "running with resources", func(p *corev1.Pod) bool {
		return running(p) && p.Status.ContainerStatuses[0].Resources != nil
	})
	r := got.Status.ContainerStatuses[0].Resources
	if r.Requests.Cpu().String() != "100m" || r.Limits.Memory().String() != "64Mi" ||
		got.Status.ContainerStatuses[0].AllocatedResources.Cpu().String() != "100m" {
		t.Errorf("reported resources %+v allocated %v", r, got.Status.ContainerStatuses[0].AllocatedResources)
	}
	code, body, _ := e.srv.Do(t, http.MethodPatch, "/api/v1/namespaces/default/pods/web/resize", "application/strategic-merge-patch+json",
		strings.NewReader(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`))
	if code != 200 {
		t.Fatalf("resize: %d %s", code, body)
	}
	e.waitPod("web", "resized", func(p *corev1.Pod) bool {
		r := p.Status.ContainerStatuses[0].Resources
		return r != nil && r.Requests.Cpu().String() == "300m"
	})

	code, body, _ = e.srv.Do(t, http.MethodPatch, "/api/v1/namespaces/default/pods/web/ephemeralcontainers", "application/strategic-merge-patch+json",
		strings.NewReader(`{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox","stdin":true,"tty":true}]}}`))
	if code != 200 {
		t.Fatalf("add an ephemeral container: %d %s", code, body)
	}
	got = e.waitPod("web", "debugger running", func(p *corev1.Pod) bool {
		return len(p.Status.EphemeralContainerStatuses) == 1 && p.Status.EphemeralContainerStatuses[0].State.Running != nil
	})
	if s := got.Status.EphemeralContainerStatuses[0]; s.Name != "debugger" || s.Image != "busybox" || s.Ready {
		t.Errorf("ephemeral status %+v", s)
	}
	e.wantLog("web", "container=debugger", started("debugger"))
	if !running(got) {
		t.Error("the pod is no longer ready with an ephemeral container")
	}
}

// A restarted agent rebuilds the logs from the pods' statuses: the current
// run, and the previous one from lastState.
func TestLogsAfterAgentRestart(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	e := newEnv(t, srv)
	clk := clocktesting.NewFakeClock(epoch)
	stop := e.startStoppableAgent(nodeagent.Options{Count: 1, Clock: clk, ClientCA: srv.API.CA().CertPEM})
	p := newPod("crash", corev1.RestartPolicyAlways, "app=busybox")
	p.Annotations = map[string]string{nodeagent.AnnotationCrashAfter: "5s"}
	e.createBound(p, "node-0")
	e.waitPod("crash", "running", running)
	clk.Step(5 * time.Second)
	e.waitPod("crash", "crashed", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].RestartCount == 1 })
	clk.Step(10 * time.Second)
	e.waitPod("crash", "restarted", func(p *corev1.Pod) bool { return p.Status.ContainerStatuses[0].State.Running != nil })
	e.createBound(withCommand(newPod("done", corev1.RestartPolicyNever, "app=busybox")), "node-0")
	e.waitPod("done", "succeeded", phase(corev1.PodSucceeded))
	stop()

	// Asked at once, before the new agent's workers looked at the pods:
	// the request waits for the pod to be taken over. A pod that ended
	// under the old agent keeps its log too.
	e.startStoppableAgent(nodeagent.Options{Count: 1, Clock: clk, ClientCA: srv.API.CA().CertPEM})
	e.wantLog("crash", "container=app", "[setpoint] container app restarted (restart 1): image busybox\n")
	e.wantLog("done", "container=app", started("app")+"[setpoint] container app exited with code 0 (Completed)\n")
	e.wantLog("crash", "container=app&previous=true&timestamps=true",
		"2026-03-01T12:00:00.000000000Z "+started("app")+"2026-03-01T12:00:05.000000000Z "+exited("app", 1))
}

// startStoppableAgent starts an agent on its own manager and returns a
// function that stops it (and waits).
func (e *env) startStoppableAgent(opts nodeagent.Options) func() {
	t := e.t
	t.Helper()
	mgr := newManager(t, e.srv)
	a, err := nodeagent.New(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.agent = a
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-a.Registered():
	case <-time.After(30 * time.Second):
		t.Fatal("nodes not registered")
	}
	return stop
}
