package controllermanager_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/internal/controllermanager"
	"github.com/setpoint-dev/setpoint/internal/controllers/provisioner"
	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestComponentConfigIsProtobuf: the components talk protobuf unless told
// otherwise, as kube-controller-manager's --kube-api-content-type, and the
// caller's configuration is left as it was.
func TestComponentConfigIsProtobuf(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:6443"}
	out := controllermanager.ComponentConfig(in)
	if out.ContentType != rest.ContentTypeProtobuf || in.ContentType != "" || out.Host != in.Host {
		t.Fatalf("ComponentConfig: %q (caller's now %q)", out.ContentType, in.ContentType)
	}
	js := &rest.Config{Host: in.Host, ContentType: rest.ContentTypeJSON}
	if got := controllermanager.ComponentConfig(js); got.ContentType != rest.ContentTypeJSON {
		t.Fatalf("an explicit JSON content type became %q", got.ContentType)
	}
	if _, err := rest.New(out); err != nil {
		t.Fatalf("a protobuf client: %v", err)
	}
	if _, err := rest.New(&rest.Config{Host: in.Host, ContentType: "application/xml"}); err == nil {
		t.Fatal("an unknown content type was accepted")
	}
}

// watchLog records the watch requests of the components: who sent it, the
// path, the Accept header and the answer's Content-Type.
type watchLog struct {
	mu      sync.Mutex
	watches []watchRecord
}

type watchRecord struct{ who, userAgent, path, accept, ctype string }

func (l *watchLog) wrap(who string, inner func(http.RoundTripper) http.RoundTripper) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if w := r.URL.Query().Get("watch"); err == nil && (w == "true" || w == "1") {
				l.mu.Lock()
				l.watches = append(l.watches, watchRecord{who: who, userAgent: r.Header.Get("User-Agent"), path: r.URL.Path,
					accept: r.Header.Get("Accept"), ctype: resp.Header.Get("Content-Type")})
				l.mu.Unlock()
			}
			return resp, err
		})
	}
}

func (l *watchLog) records() []watchRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.watches)
}

// gcServiceAccount ends the user agent of the garbage collector's client,
// quotaServiceAccount that of the resource quota controller's.
const (
	gcServiceAccount    = "system:serviceaccount:kube-system:generic-garbage-collector"
	quotaServiceAccount = "system:serviceaccount:kube-system:resourcequota-controller"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestComponentsWatchInProtobuf: the controller manager (each controller
// as its ServiceAccount), the scheduler and the nodes (as themselves) ask
// for protobuf on every watch of a built-in kind, metadata-only watches
// included (the garbage collector's and the quota controller's, as
// client-go's metadata client asks), and the server answers in
// protobuf, as kube-apiserver does for kube-controller-manager,
// kube-scheduler and the kubelet: a watch event decoded from JSON costs
// several times its protobuf decoding.
func TestComponentsWatchInProtobuf(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := clientFor(t, srv.Kubeconfig)
	log := &watchLog{}
	cmCfg, schedCfg, adminCfg, nodeCreds := componentConfigs(t, srv)
	cmCfg.WrapTransport = log.wrap("controller manager", nil)
	schedCfg.WrapTransport = log.wrap("scheduler", nil)
	nodesAdmin := *adminCfg
	nodesAdmin.WrapTransport = log.wrap("node agent", nil)
	nodesOpts := controllermanager.NodesOptions{Common: controllermanager.Common{Config: &nodesAdmin, Logger: testLogger()}}
	nodesOpts.Agent.Count = 2
	nodesOpts.Agent.NodeCredentials = func(name string) (*rest.Config, error) {
		cfg, err := nodeCreds(name)
		if err == nil {
			cfg.WrapTransport = log.wrap(name, cfg.WrapTransport)
		}
		return cfg, err
	}
	election := controllermanager.Election{Identity: "ctype"}
	cm, err := controllermanager.NewControllerManager(controllermanager.ControllerManagerOptions{
		Common:                       controllermanager.Common{Config: cmCfg, Logger: testLogger(), Election: election},
		UseServiceAccountCredentials: true,
		Provisioner:                  provisioner.Options{NoDefaultClass: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := controllermanager.NewScheduler(controllermanager.SchedulerOptions{
		Common: controllermanager.Common{Config: schedCfg, Logger: testLogger(), Election: election}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := controllermanager.NewNodes(nodesOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer runManagers(t, cm, sched, nodes)()

	// A Deployment to Running pods: every component's informers are then
	// watching.
	deploys := rest.For[*appsv1.Deployment, *appsv1.DeploymentList](admin, deployGVR, true).Namespace("default")
	if _, err := deploys.Create(ctx, deployment("default", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := rest.For[*corev1.Pod, *corev1.PodList](admin, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace("default")
	eventually(t, 45*time.Second, "2 running pods", func() string {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == 2 {
			return ""
		}
		return fmt.Sprintf("%d of %d running", running, len(l.Items))
	})

	// The metadata-only watches (the garbage collector's monitors, the
	// quota controller's deletion watches) are among those checked.
	eventually(t, 30*time.Second, "metadata-only watches of the garbage collector and the quota controller", func() string {
		for _, sa := range []string{gcServiceAccount, quotaServiceAccount} {
			if !slices.ContainsFunc(log.records(), func(w watchRecord) bool {
				return strings.HasSuffix(w.userAgent, sa) && w.accept == rest.AcceptPartialObjectMetadataProtobuf
			}) {
				return "none of " + sa
			}
		}
		return ""
	})
	seen := map[string]bool{}
	for _, w := range log.records() {
		key := w.who + " " + w.path + " " + w.accept + " " + w.ctype
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Logf("%s: watch %s, Accept %q: %s", w.who, w.path, w.accept, w.ctype)
		mt, _, _ := strings.Cut(w.ctype, ";")
		if mt != rest.ContentTypeProtobuf {
			t.Errorf("%s (%s) watched %s in %q (Accept %q)", w.who, w.userAgent, w.path, w.ctype, w.accept)
		}
	}
	for _, who := range []string{"controller manager", "scheduler", "node-0"} {
		if !slices.ContainsFunc(log.records(), func(w watchRecord) bool { return w.who == who }) {
			t.Errorf("no watch of the %s recorded", who)
		}
	}
}
