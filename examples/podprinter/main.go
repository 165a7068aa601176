// Command podprinter is seed 002's workqueue example on setpoint's library:
// it watches the pods of one namespace through an informer, queues their
// keys, and one worker prints every pod it syncs. A key whose sync fails is
// retried with backoff five times, then dropped.
//
//	podprinter --kubeconfig .setpoint/kubeconfig --namespace default
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/setpoint-dev/setpoint/cache"
	"github.com/setpoint-dev/setpoint/informer"
	"github.com/setpoint-dev/setpoint/rest"
	"github.com/setpoint-dev/setpoint/workqueue"
)

// maxRetries is how often a failing key is retried before it is dropped.
const maxRetries = 5

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	namespace := flag.String("namespace", corev1.NamespaceDefault, "namespace whose pods are printed")
	workers := flag.Int("workers", 1, "number of workers")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := loadConfig(*kubeconfig)
	if err == nil {
		err = run(ctx, cfg, *namespace, *workers, os.Stdout)
	}
	if err != nil {
		slog.Error("podprinter failed", "err", err)
		os.Exit(1)
	}
}

func loadConfig(path string) (*rest.Config, error) {
	if path == "" {
		return rest.LoadDefault()
	}
	return rest.ConfigFromKubeconfig(path, "")
}

// controller binds an informer's cache to a workqueue of keys.
type controller struct {
	indexer *cache.ThreadSafeIndexer[*corev1.Pod]
	queue   *workqueue.RateLimitingQueue[string]
	out     io.Writer
}

// run prints pods until ctx ends.
func run(ctx context.Context, cfg *rest.Config, namespace string, workers int, out io.Writer) error {
	client, err := rest.New(cfg)
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	defer client.CloseIdleConnections()
	pods := rest.For[*corev1.Pod, *corev1.PodList](client, corev1.SchemeGroupVersion.WithResource("pods"), true).Namespace(namespace)
	inf := informer.New[*corev1.Pod, *corev1.PodList](pods, informer.Options[*corev1.Pod]{
		Resource: corev1.Resource("pods"),
	})
	c := &controller{
		indexer: inf.Indexer(),
		queue:   workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](nil), workqueue.Config{}),
		out:     out,
	}
	// The cache is updated before the handler hears of a change, so a
	// worker reading the key finds that state or a newer one.
	enqueue := func(p *corev1.Pod) {
		if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { enqueue(p) },
		UpdateFunc: func(_, p *corev1.Pod) { enqueue(p) },
		DeleteFunc: func(p *corev1.Pod, _ bool) { enqueue(p) },
	}, informer.HandlerOptions{Name: "podprinter"}); err != nil {
		return fmt.Errorf("add handler: %w", err)
	}
	return c.run(ctx, inf, workers)
}

func (c *controller) run(ctx context.Context, inf *informer.Informer[*corev1.Pod], workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { <-done }()
	defer c.queue.ShutDown()

	slog.Info("starting pod controller")
	if !informer.WaitForCacheSync(ctx, inf.HasSynced) {
		if err := inf.LastError(); err != nil {
			return fmt.Errorf("pods cache did not sync: %w", err)
		}
		return errors.New("pods cache did not sync before shutdown")
	}
	fmt.Fprintln(c.out, "pod cache synced")
	finished := make(chan struct{}, workers)
	for range workers {
		go func() {
			defer func() { finished <- struct{}{} }()
			for c.processNextItem() {
			}
		}()
	}
	<-ctx.Done()
	slog.Info("stopping pod controller")
	c.queue.ShutDown()
	for range workers {
		<-finished
	}
	return nil
}

func (c *controller) processNextItem() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	// Done unblocks the key for other workers: one key is never synced by
	// two workers at once.
	defer c.queue.Done(key)
	c.handleErr(c.syncToStdout(key), key)
	return true
}

// syncToStdout is the business logic: print the pod, or its absence.
func (c *controller) syncToStdout(key string) error {
	pod, exists, err := c.indexer.GetByKey(key)
	if err != nil {
		return fmt.Errorf("fetch %s from the cache: %w", key, err)
	}
	if !exists {
		fmt.Fprintf(c.out, "Pod %s does not exist anymore\n", key)
		return nil
	}
	fmt.Fprintf(c.out, "Sync/Add/Update for Pod %s\n", pod.GetName())
	return nil
}

// handleErr forgets a key that synced and retries a failing one, at most
// maxRetries times.
func (c *controller) handleErr(err error, key string) {
	if err == nil {
		c.queue.Forget(key)
		return
	}
	if c.queue.NumRequeues(key) < maxRetries {
		slog.Info("error syncing pod, retrying", "key", key, "err", err)
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
	slog.Error("dropping pod out of the queue", "key", key, "err", err)
}
