package clientgo

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/go-logr/logr"
	spclient "github.com/setpoint-dev/setpoint/client"

	"github.com/setpoint-dev/setpoint/manager"
	sprest "github.com/setpoint-dev/setpoint/rest"
)

// The client benchmarks read clientPods pods of one namespace through the
// cached client of setpoint (manager.GetClient) and of controller-runtime
// (client.New over its informer cache), both reading from the same
// `setpoint apiserver` process and handing out deep copies (each one's
// default).
const (
	clientPods      = 1_000
	clientNamespace = "bench"
)

// clientServer is the server of the client benchmarks, started once per
// benchmark binary (TestMain stops it).
var clientServer = sync.OnceValue(func() *syncServer {
	s := &syncServer{}
	s.err = func() error {
		var err error
		if s.dir, err = os.MkdirTemp("", "setpoint-client-bench"); err != nil {
			return err
		}
		if s.cmd, err = startSetpointProcess(s.dir, "memory", ""); err != nil {
			return err
		}
		s.kubeconfig = filepath.Join(s.dir, "data", "kubeconfig")
		cfg, err := waitReady(s.kubeconfig)
		if err != nil {
			return err
		}
		return loadClientPods(cfg)
	}()
	clientServerStarted = s
	return s
})

var clientServerStarted *syncServer

func loadClientPods(cfg *sprest.Config) error {
	c, err := sprest.New(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	nss := sprest.For[*corev1.Namespace, *corev1.NamespaceList](c, corev1.SchemeGroupVersion.WithResource("namespaces"), false)
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clientNamespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	// No controller manager runs: the pods' service account is made here.
	sas := sprest.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c, corev1.SchemeGroupVersion.WithResource("serviceaccounts"), true)
	if _, err := sas.Namespace(clientNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account: %w", err)
	}
	pods := sprest.For[*corev1.Pod, *corev1.PodList](c, podsGVR, true).Namespace(clientNamespace)
	for i := range clientPods {
		p := realisticPod(i)
		p.Namespace = clientNamespace
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %d: %w", i, err)
		}
	}
	return nil
}

// cachedReader is what both benchmarks read through.
type cachedReader struct {
	get  func(ctx context.Context, name string) error
	list func(ctx context.Context) (int, error)
}

func setpointReader(b *testing.B, ctx context.Context, kubeconfig string) cachedReader {
	cfg, err := sprest.ConfigFromKubeconfig(kubeconfig, "")
	if err != nil {
		b.Fatal(err)
	}
	mgr, err := manager.New(manager.Options{Config: cfg, MetricsAddr: "0", HealthAddr: "0",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	c := mgr.GetClient()
	return cachedReader{
		get: func(ctx context.Context, name string) error {
			return c.Get(ctx, spclient.ObjectKey{Namespace: clientNamespace, Name: name}, &corev1.Pod{})
		},
		list: func(ctx context.Context) (int, error) {
			l := &corev1.PodList{}
			err := c.List(ctx, l, spclient.InNamespace(clientNamespace))
			return len(l.Items), err
		},
	}
}

func controllerRuntimeReader(b *testing.B, ctx context.Context, kubeconfig string) cachedReader {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	crlog.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	ca, err := crcache.New(cfg, crcache.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = ca.Start(ctx) }()
	c, err := crclient.New(cfg, crclient.Options{Scheme: scheme, Cache: &crclient.CacheOptions{Reader: ca}})
	if err != nil {
		b.Fatal(err)
	}
	return cachedReader{
		get: func(ctx context.Context, name string) error {
			return c.Get(ctx, crclient.ObjectKey{Namespace: clientNamespace, Name: name}, &corev1.Pod{})
		},
		list: func(ctx context.Context) (int, error) {
			l := &corev1.PodList{}
			err := c.List(ctx, l, crclient.InNamespace(clientNamespace))
			return len(l.Items), err
		},
	}
}

// readers starts both cached clients and waits until each lists every
// pod.
func readers(b *testing.B) map[string]cachedReader {
	srv := clientServer()
	if srv.err != nil {
		b.Fatal(srv.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	out := map[string]cachedReader{
		"setpoint":           setpointReader(b, ctx, srv.kubeconfig),
		"controller-runtime": controllerRuntimeReader(b, ctx, srv.kubeconfig),
	}
	for name, r := range out {
		deadline := time.Now().Add(60 * time.Second)
		for {
			n, err := r.list(ctx)
			if err == nil && n == clientPods {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s cache: %d pods, %v", name, n, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return out
}

// BenchmarkCachedGet: Get of one pod (a deep copy) from the cache.
func BenchmarkCachedGet(b *testing.B) {
	rs := readers(b)
	names := make([]string, clientPods)
	for i := range names {
		p := realisticPod(i)
		names[i] = p.Name
	}
	for _, impl := range []string{"setpoint", "controller-runtime"} {
		b.Run("impl="+impl, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := rs[impl].get(ctx, names[i%clientPods]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkCachedList: List of the namespace's 1,000 pods (deep copies)
// from the cache.
func BenchmarkCachedList(b *testing.B) {
	rs := readers(b)
	for _, impl := range []string{"setpoint", "controller-runtime"} {
		b.Run("impl="+impl+"/pods="+strconv.Itoa(clientPods), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if n, err := rs[impl].list(ctx); err != nil || n != clientPods {
					b.Fatalf("listed %d, %v", n, err)
				}
			}
		})
	}
}
