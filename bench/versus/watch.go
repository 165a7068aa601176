package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/setpoint-dev/setpoint/compat/procstat"
)

// watchResult is one fan-out run: delivery latencies from just before the
// writer's update request to a watcher decoding the event, and the
// writer's rate.
type watchResult struct {
	p50, p99, max       time.Duration
	writesPerSec        float64
	delivered, expected int
	setup               time.Duration // opening the watches
	// CPU seconds of the driver (this process: the writer and every
	// watcher's decoding) and of the server's processes from the first
	// write until every watcher saw the last one or gave up.
	clientCPU, serverCPU float64
}

// watcher is one open watch and what it saw.
type watcher struct {
	w         watch.Interface
	latencies []time.Duration
	lastSeq   atomic.Int64
}

// watchFanout opens n watches (on clients, spread evenly) on one
// ConfigMap, then runs one writer — get, then update with the send time —
// for d, and waits for every watcher to see the last update. It samples
// the CPU seconds of this process and of procs (the server's) around the
// writes and deliveries.
func watchFanout(ctx context.Context, kubeconfig, ns string, n, clients int, d time.Duration, procs []procstat.Named) (watchResult, error) {
	var res watchResult
	writer, err := newClientset(kubeconfig, nil)
	if err != nil {
		return res, err
	}
	name := "hot-" + strconv.Itoa(n)
	cm, err := writer.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"payload": payload, "sent": "0", "seq": "0"},
	}, metav1.CreateOptions{})
	if err != nil {
		return res, fmt.Errorf("create %s: %w", name, err)
	}
	start := time.Now()
	ws, err := openWatchers(ctx, kubeconfig, ns, name, cm.ResourceVersion, n, clients)
	defer func() {
		for _, w := range ws {
			w.w.Stop()
		}
	}()
	if err != nil {
		return res, err
	}
	res.setup = time.Since(start)
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.receive() }()
	}
	cpu, err := sampleCPU(procs)
	if err != nil {
		return res, err
	}
	seq, elapsed, err := writeLoop(ctx, writer, ns, name, d)
	if err != nil {
		return res, err
	}
	res.writesPerSec = float64(seq) / elapsed.Seconds()
	deadline := time.Now().Add(30 * time.Second)
	for !allSeen(ws, seq) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if res.clientCPU, res.serverCPU, err = cpu(); err != nil {
		return res, err
	}
	for _, w := range ws {
		w.w.Stop()
	}
	wg.Wait()
	var all []time.Duration
	for _, w := range ws {
		all = append(all, w.latencies...)
	}
	slices.Sort(all)
	res.delivered, res.expected = len(all), int(seq)*n
	res.p50, res.p99 = percentile(all, 50), percentile(all, 99)
	if len(all) > 0 {
		res.max = all[len(all)-1]
	}
	if err := writer.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return res, fmt.Errorf("delete %s: %w", name, err)
	}
	return res, nil
}

// openWatchers opens n watches from resourceVersion rv, 32 at a time.
func openWatchers(ctx context.Context, kubeconfig, ns, name, rv string, n, clients int) ([]*watcher, error) {
	css := make([]kubernetes.Interface, max(clients, 1))
	for i := range css {
		cs, err := newClientset(kubeconfig, nil)
		if err != nil {
			return nil, err
		}
		css[i] = cs
	}
	ws := make([]*watcher, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				w, err := css[i%len(css)].CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
					FieldSelector: "metadata.name=" + name, ResourceVersion: rv})
				if err != nil {
					errs[i] = fmt.Errorf("watch %d: %w", i, err)
					continue
				}
				ws[i] = &watcher{w: w}
			}
		}()
	}
	wg.Wait()
	opened := slices.DeleteFunc(slices.Clone(ws), func(w *watcher) bool { return w == nil })
	return opened, errors.Join(errs...)
}

// receive records the latency of every update until the watch ends.
func (w *watcher) receive() {
	for ev := range w.w.ResultChan() {
		now := time.Now()
		if ev.Type != watch.Modified {
			continue
		}
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		sent, err1 := strconv.ParseInt(cm.Data["sent"], 10, 64)
		seq, err2 := strconv.ParseInt(cm.Data["seq"], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		w.latencies = append(w.latencies, now.Sub(time.Unix(0, sent)))
		w.lastSeq.Store(seq)
	}
}

func allSeen(ws []*watcher, seq int64) bool {
	for _, w := range ws {
		if w.lastSeq.Load() < seq {
			return false
		}
	}
	return true
}

// writeLoop gets and updates the object as fast as one client can for d,
// stamping each update with its send time and sequence number.
func writeLoop(ctx context.Context, cs kubernetes.Interface, ns, name string, d time.Duration) (int64, time.Duration, error) {
	cms := cs.CoreV1().ConfigMaps(ns)
	var seq int64
	start := time.Now()
	for time.Since(start) < d {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return seq, 0, fmt.Errorf("get %s: %w", name, err)
		}
		cm.Data["seq"] = strconv.FormatInt(seq+1, 10)
		cm.Data["sent"] = strconv.FormatInt(time.Now().UnixNano(), 10)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return seq, 0, fmt.Errorf("update %s: %w", name, err)
		}
		seq++
	}
	return seq, time.Since(start), nil
}
