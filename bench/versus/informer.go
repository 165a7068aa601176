package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// requestKinds counts how a client reached the server: streaming lists
// (watch with sendInitialEvents=true), plain watches and lists, and over
// which protocol (HTTP/2.0 with client-go's defaults).
type requestKinds struct {
	stream, watch, list atomic.Int64
	proto               atomic.Value // string: the protocol of the last response
}

func (k *requestKinds) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		switch {
		case r.Method != http.MethodGet:
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			k.stream.Add(1)
		case q.Get("watch") == "true":
			k.watch.Add(1)
		default:
			k.list.Add(1)
		}
		resp, err := rt.RoundTrip(r)
		if err == nil {
			k.proto.Store(resp.Proto)
		}
		return resp, err
	})
}

func (k *requestKinds) String() string {
	proto, _ := k.proto.Load().(string)
	return fmt.Sprintf("%d streaming list(s), %d list(s), %d watch(es) over %s", k.stream.Load(), k.list.Load(), k.watch.Load(), proto)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// informerResult is one initial sync.
type informerResult struct {
	sync      time.Duration
	heapBytes int64 // live heap the informer and its client hold after sync
	requests  string
}

// syncInformer starts a client-go shared informer (factory defaults:
// no resync, the streaming list when the WatchListClient feature is on,
// as it is by default in client-go v0.37) on the ConfigMaps of ns with a
// new client, and times it from start to the informer's synced signal. The heap figure is
// the live heap after a GC with the informer running minus the live heap
// before its client existed.
func syncInformer(ctx context.Context, kubeconfig, ns string, want int) (informerResult, error) {
	var res informerResult
	before := liveHeap()
	var kinds requestKinds
	cs, err := newClientset(kubeconfig, kinds.wrap)
	if err != nil {
		return res, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	start := time.Now()
	factory.Start(stop)
	// WaitFor reacts to the informer's sync at once; WaitForCacheSync polls
	// every 100 ms, which would round every figure up to a multiple of it.
	if !cache.WaitFor(syncCtx, "", inf.HasSyncedChecker()) {
		return res, fmt.Errorf("informer on %s did not sync: %w (%s)", ns, syncCtx.Err(), &kinds)
	}
	res.sync = time.Since(start)
	if got := len(inf.GetStore().ListKeys()); got != want {
		return res, fmt.Errorf("informer on %s holds %d objects, want %d", ns, got, want)
	}
	res.heapBytes = liveHeap() - before
	res.requests = kinds.String()
	runtime.KeepAlive(inf)
	return res, nil
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
