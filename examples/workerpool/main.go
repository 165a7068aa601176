// Command workerpool is seed 000's "WorkQueue 模式" example on setpoint's
// library: a shared informer factory (30 s resync) feeds the keys of all
// pods into a rate-limited workqueue drained by a pool of workers, which read
// each pod from the lister and report its phase. With --delete-failed, a
// failed pod that a controller owns is deleted so that its owner replaces it.
//
//	workerpool --kubeconfig .setpoint/kubeconfig --workers 2
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	workers := flag.Int("workers", 2, "number of workers")
	resync := flag.Duration("resync", 30*time.Second, "informer resync period")
	deleteFailed := flag.Bool("delete-failed", false, "delete failed pods owned by a controller")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cfg *rest.Config
	var err error
	if *kubeconfig == "" {
		cfg, err = rest.LoadDefault()
	} else {
		cfg, err = rest.ConfigFromKubeconfig(*kubeconfig, "")
	}
	if err == nil {
		err = run(ctx, cfg, options{workers: *workers, resync: *resync, deleteFailed: *deleteFailed}, os.Stdout)
	}
	if err != nil {
		slog.Error("workerpool failed", "err", err)
		os.Exit(1)
	}
}

type options struct {
	workers      int
	resync       time.Duration
	deleteFailed bool
}

// controller is the seed's Controller: a lister, the informer's HasSynced
// and the queue of keys.
type controller struct {
	pods   *rest.Resource[*corev1.Pod, *corev1.PodList]
	lister *cache.Lister[*corev1.Pod]
	synced func() bool
	queue  *workqueue.RateLimitingQueue[string]
	opts   options
	out    io.Writer
}

func run(ctx context.Context, cfg *rest.Config, opts options, out io.Writer) error {
	client, err := rest.New(cfg)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	defer client.CloseIdleConnections()
	factory := informer.NewFactory(client, informer.FactoryOptions{ResyncPeriod: opts.resync})
	podInformer := informer.For[*corev1.Pod, *corev1.PodList](factory, podsGVR, true)
	c := &controller{
		pods:   rest.For[*corev1.Pod, *corev1.PodList](client, podsGVR, true),
		lister: podInformer.Lister(),
		synced: podInformer.HasSynced,
		queue:  workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](nil), workqueue.Config{}),
		opts:   opts,
		out:    out,
	}
	// Initial-list and resync events yield to live ones.
	enqueue := func(p *corev1.Pod, priority int) {
		if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
			c.queue.AddWithOpts(workqueue.AddOpts{Priority: priority}, key)
		}
	}
	if _, err := podInformer.AddEventHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, initial bool) {
			if initial {
				enqueue(p, workqueue.LowPriority)
			} else {
				enqueue(p, 0)
			}
		},
		UpdateFunc: func(old, p *corev1.Pod) {
			if old == p {
				enqueue(p, workqueue.LowPriority) // resync
			} else {
				enqueue(p, 0)
			}
		},
		DeleteFunc: func(p *corev1.Pod, _ bool) { enqueue(p, 0) },
	}, informer.HandlerOptions{Name: "workerpool"}); err != nil {
		return fmt.Errorf("add handler: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	return c.run(ctx)
}

func (c *controller) run(ctx context.Context) error {
	defer c.queue.ShutDown()
	fmt.Fprintln(c.out, "Starting controller")
	if !informer.WaitForCacheSync(ctx, c.synced) {
		return fmt.Errorf("failed to sync cache: %w", ctx.Err())
	}
	fmt.Fprintln(c.out, "Controller synced and ready")
	finished := make(chan struct{}, c.opts.workers)
	for range c.opts.workers {
		go func() {
			defer func() { finished <- struct{}{} }()
			for c.processNextWorkItem(ctx) {
			}
		}()
	}
	<-ctx.Done()
	fmt.Fprintln(c.out, "Shutting down controller")
	c.queue.ShutDown()
	for range c.opts.workers {
		<-finished
	}
	return nil
}

func (c *controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.syncHandler(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		slog.Error("error syncing, requeuing", "key", key, "err", err)
		return true
	}
	c.queue.Forget(key)
	fmt.Fprintf(c.out, "Successfully synced '%s'\n", key)
	return true
}

func (c *controller) syncHandler(ctx context.Context, key string) error {
	namespace, name, ok := strings.Cut(key, "/")
	if !ok {
		return fmt.Errorf("invalid resource key: %s", key)
	}
	pod, err := c.lister.Namespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(c.out, "Pod %s/%s has been deleted\n", namespace, name)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "Processing Pod: %s/%s (Phase: %s)\n", pod.Namespace, pod.Name, pod.Status.Phase)
	if pod.Status.Phase != corev1.PodFailed {
		return nil
	}
	fmt.Fprintf(c.out, "Pod %s/%s is in Failed state, taking action...\n", pod.Namespace, pod.Name)
	if !c.opts.deleteFailed || metav1.GetControllerOf(pod) == nil || pod.DeletionTimestamp != nil {
		return nil
	}
	// The owner replaces the pod; the precondition makes sure we delete the
	// failed pod we saw and not a newer one of the same name.
	uid := pod.UID
	err = c.pods.Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete failed pod %s: %w", key, err)
	}
	fmt.Fprintf(c.out, "Deleted failed Pod %s/%s\n", namespace, name)
	return nil
}
