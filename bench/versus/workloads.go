package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// payload is the 1 KiB value of every ConfigMap the benchmark writes.
var payload = strings.Repeat("x", 1024)

// groups is how many values the "group" label takes: a selector on one
// group matches 1 in groups objects.
const groups = 10

func configMap(name string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"app": "versus", "group": strconv.Itoa(i % groups)}},
		Data: map[string]string{"payload": payload},
	}
}

func createNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// createConfigMaps creates n ConfigMaps cm-000000… in ns with writers
// concurrent goroutines sharing one client, reporting progress every
// few seconds, and returns the elapsed time. The first error stops it.
func createConfigMaps(ctx context.Context, cs kubernetes.Interface, ns string, n, writers int) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	var wg sync.WaitGroup
	stopProgress := progress(fmt.Sprintf("creating %d in %s with %d writers", n, ns, writers), func() string {
		return fmt.Sprintf("%d/%d", done.Load(), n)
	})
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cms := cs.CoreV1().ConfigMaps(ns)
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, err := cms.Create(ctx, configMap(fmt.Sprintf("cm-%06d", i), i), metav1.CreateOptions{}); err != nil {
					cancel(fmt.Errorf("create %s/cm-%06d: %w", ns, i, err))
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// progress logs what() every 5 s until the returned stop is called.
func progress(what string, status func() string) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				logf("  %s: %s", what, status())
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// timeList runs list reps times after one warm-up call and returns the
// median duration; every call must return want items.
func timeList(ctx context.Context, reps, want int, list func(context.Context) (int, error)) (time.Duration, error) {
	var times []float64
	for i := range reps + 1 {
		start := time.Now()
		got, err := list(ctx)
		elapsed := time.Since(start)
		if err != nil {
			return 0, err
		}
		if got != want {
			return 0, fmt.Errorf("listed %d items, want %d", got, want)
		}
		if i > 0 { // the first is a warm-up
			times = append(times, float64(elapsed))
		}
	}
	return time.Duration(median(times)), nil
}

// listAll is one unpaged list of ns (client-go's default: no limit, a
// consistent read), with an optional label selector.
func listAll(cs kubernetes.Interface, ns, selector string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
}

// listPaged lists ns in pages of limit, following continue tokens.
func listPaged(cs kubernetes.Interface, ns string, limit int64) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		n, cont := 0, ""
		for {
			l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: limit, Continue: cont})
			if err != nil {
				return n, err
			}
			n += len(l.Items)
			if cont = l.Continue; cont == "" {
				return n, nil
			}
		}
	}
}
