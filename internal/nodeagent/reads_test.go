package nodeagent_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/setpoint-dev/setpoint/internal/nodeagent"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// startFunc starts a server and an agent on it.
type startFunc func(testing.TB, nodeagent.Options) *env

// forIdentities runs f with the nodes reading and writing as the manager
// (no NodeCredentials), then each as itself (system:node:NAME).
func forIdentities(t *testing.T, f func(*testing.T, startFunc)) {
	t.Run("admin", func(t *testing.T) { f(t, startEnv) })
	t.Run("node", func(t *testing.T) {
		f(t, func(t testing.TB, opts nodeagent.Options) *env { e, _ := startNodeEnv(t, opts); return e })
	})
}

// startNodeEnv starts an agent whose nodes read and write as themselves,
// recording the requests of the nodes and of the manager's client; when
// the test ends it fails if the manager's client read anything a node
// reads (pods, nodes, configmaps, secrets, claims, service accounts).
func startNodeEnv(t testing.TB, opts nodeagent.Options) (*env, *requestLog) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	e := newEnv(t, srv)
	log := &requestLog{open: map[string]int{}}
	creds := nodeCredentials(t, srv)
	opts.NodeCredentials = func(name string) (*rest.Config, error) {
		cfg, err := creds(name)
		if err == nil {
			cfg.WrapTransport = log.wrap("system:node:" + name)
		}
		return cfg, err
	}
	e.startAgentWrapped(opts, log.wrap("manager"))
	t.Cleanup(func() {
		for _, r := range log.requests("manager") {
			for _, res := range []string{"/pods", "/nodes", "/configmaps", "/secrets", "/persistentvolumeclaims", "/serviceaccounts"} {
				if strings.HasPrefix(r, "GET ") && strings.Contains(r, res) {
					t.Errorf("the manager's client read %s; each node should read as itself", r)
				}
			}
		}
	})
	return e, log
}

// requestLog records requests by client, and counts the watches each
// client holds open, by path and query.
type requestLog struct {
	mu   sync.Mutex
	seen []string
	open map[string]int
}

func (l *requestLog) wrap(who string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.seen = append(l.seen, who+" "+r.Method+" "+r.URL.RequestURI())
			l.mu.Unlock()
			resp, err := next.RoundTrip(r)
			if err != nil || r.URL.Query().Get("watch") != "true" || resp.StatusCode != http.StatusOK {
				return resp, err
			}
			key := who + " " + watchKey(r)
			l.mu.Lock()
			l.open[key]++
			l.mu.Unlock()
			resp.Body = &countedBody{ReadCloser: resp.Body, done: func() {
				l.mu.Lock()
				l.open[key]--
				l.mu.Unlock()
			}}
			return resp, nil
		})
	}
}

// watchKey is the watch's path and field selector.
func watchKey(r *http.Request) string {
	return r.URL.Path + "?" + r.URL.Query().Get("fieldSelector")
}

// requests returns what who sent, as "METHOD URI".
func (l *requestLog) requests(who string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		if rest, ok := strings.CutPrefix(s, who+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// watching counts who's open watches of path?fieldSelector.
func (l *requestLog) watching(who, key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[who+" "+key]
}

type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Each node reads as a kubelet: its pods with spec.nodeName=<node>, its
// Node by name, and each ConfigMap its pods need through one watch of
// that object, shared by the node's pods and closed with the last of
// them; the manager's client reads nothing of it.
func TestNodesReadAsThemselves(t *testing.T) {
	e, log := startNodeEnv(t, nodeagent.Options{Count: 2})
	create[*corev1.ConfigMap, *corev1.ConfigMapList](e, "configmaps", &corev1.ConfigMap{ObjectMeta: meta("shared")})
	uses := func(name string) *corev1.Pod {
		p := newPod(name, corev1.RestartPolicyAlways, "app=nginx")
		p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}
		return p
	}
	e.createBound(uses("a"), "node-0")
	e.createBound(uses("b"), "node-0")
	e.createBound(uses("c"), "node-1")
	for _, p := range []string{"a", "b", "c"} {
		e.waitPod(p, "running", running)
	}
	const cmWatch = "/api/v1/namespaces/default/configmaps?metadata.name=shared"
	for node, want := range map[string]int{"node-0": 1, "node-1": 1} {
		if got := log.watching("system:node:"+node, cmWatch); got != want {
			t.Errorf("%s holds %d watches of the ConfigMap, want %d", node, got, want)
		}
	}
	for who, want := range map[string]string{
		"system:node:node-0": "/api/v1/pods?spec.nodeName=node-0",
		"system:node:node-1": "/api/v1/nodes?metadata.name=node-1",
	} {
		if log.watching(who, want) != 1 {
			t.Errorf("%s does not watch %s; its requests: %v", who, want, log.requests(who))
		}
	}
	for _, p := range []string{"a", "b"} {
		if err := e.pods.Namespace("default").Delete(ctx(), p, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "node-0 stops watching the ConfigMap", func() bool {
		return log.watching("system:node:node-0", cmWatch) == 0
	})
	if log.watching("system:node:node-1", cmWatch) != 1 {
		t.Error("node-1 stopped watching the ConfigMap its pod still needs")
	}
	if slices.ContainsFunc(log.requests("system:node:node-0"), func(r string) bool {
		return strings.Contains(r, "/configmaps") && !strings.Contains(r, "metadata.name%3Dshared")
	}) {
		t.Errorf("node-0 read ConfigMaps other than by name: %v", log.requests("system:node:node-0"))
	}
}

// A pod whose Secret its node may not read (the Node authorizer relates
// no object to a node through a mirror pod) waits, as on a kubelet, with
// the kubelet's watch-based manager's error.
func TestNodeRefusedDependency(t *testing.T) {
	e, _ := startNodeEnv(t, nodeagent.Options{})
	create[*corev1.Secret, *corev1.SecretList](e, "secrets", &corev1.Secret{ObjectMeta: meta("hidden")})
	p := newPod("mirror", corev1.RestartPolicyAlways, "app=nginx")
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static"}
	p.Spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: "hidden"}}}}
	e.createBound(p, "node-0")
	e.waitEvent("mirror", "FailedMount",
		`MountVolume.SetUp failed for volume "tls" : failed to sync secret cache: timed out waiting for the condition`)
	if p := e.getPod("mirror"); p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" {
		t.Errorf("pod with a refused secret: phase %s podIP %q", p.Status.Phase, p.Status.PodIP)
	}
}
