package clientgo

import (
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/setpoint-dev/setpoint/workqueue"
	kworkqueue "k8s.io/client-go/util/workqueue"
)

// benchQueue is the part of a work queue the throughput benchmarks drive;
// setpoint's and client-go's queues both satisfy it.
type benchQueue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// rateLimitedQueue adds the retry half of the controller loop.
type rateLimitedQueue interface {
	benchQueue
	AddRateLimited(string)
	Forget(string)
}

var (
	keysMu sync.Mutex
	keys   []string // "ns/name-i", grown on demand and shared by all runs
)

// benchKeys returns n distinct keys, so every Add makes exactly one item.
func benchKeys(n int) []string {
	keysMu.Lock()
	defer keysMu.Unlock()
	for len(keys) < n {
		keys = append(keys, "default/object-"+strconv.Itoa(len(keys)))
	}
	return keys[:n]
}

var parallelism = []int{1, 8, 64}

// BenchmarkWorkqueueThroughput measures items per second through
// Add→Get→Done with n producers and n workers, setpoint against client-go.
func BenchmarkWorkqueueThroughput(b *testing.B) {
	for _, n := range parallelism {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.Run("setpoint", func(b *testing.B) {
				runThroughput(b, n, workqueue.New[string](), false)
			})
			b.Run("client-go", func(b *testing.B) {
				runThroughput(b, n, kworkqueue.NewTyped[string](), false)
			})
		})
	}
}

// BenchmarkWorkqueueRateLimitedThroughput is the controller loop on the
// rate-limited queues: producers AddRateLimited, workers Get, Forget, Done.
// The limiter never delays (zero base), so the figure is the cost of the
// rate-limiting machinery on top of the queue.
func BenchmarkWorkqueueRateLimitedThroughput(b *testing.B) {
	for _, n := range parallelism {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.Run("setpoint", func(b *testing.B) {
				q := workqueue.NewRateLimiting[string](
					workqueue.NewExponentialRateLimiter[string](0, 0), workqueue.Config{})
				runThroughput(b, n, q, true)
			})
			b.Run("client-go", func(b *testing.B) {
				q := kworkqueue.NewTypedRateLimitingQueue[string](
					kworkqueue.NewTypedItemExponentialFailureRateLimiter[string](0, 0))
				runThroughput(b, n, q, true)
			})
		})
	}
}

// runThroughput pushes b.N distinct keys through q with n producers and n
// workers, and reports items/s. It fails unless every key was processed.
func runThroughput(b *testing.B, n int, q benchQueue, rateLimited bool) {
	items := benchKeys(b.N)
	rl, _ := q.(rateLimitedQueue)
	if rateLimited && rl == nil {
		b.Fatalf("%T is not rate limited", q)
	}
	processed := make([]int, n)
	var workers, producers sync.WaitGroup
	runtime.GC() // do not bill this run for the previous run's garbage
	b.ReportAllocs()
	b.ResetTimer()
	for w := range n {
		workers.Add(1)
		go func() {
			defer workers.Done()
			count := 0
			for {
				it, shutdown := q.Get()
				if shutdown {
					break
				}
				if rateLimited {
					rl.Forget(it)
				}
				q.Done(it)
				count++
			}
			processed[w] = count
		}()
	}
	for p := range n {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := p; i < len(items); i += n {
				if rateLimited {
					rl.AddRateLimited(items[i])
				} else {
					q.Add(items[i])
				}
			}
		}()
	}
	producers.Wait()
	q.ShutDown() // both queues hand out what is queued, then report shutdown
	workers.Wait()
	b.StopTimer()
	total := 0
	for _, c := range processed {
		total += c
	}
	if total != b.N {
		b.Fatalf("processed %d items, added %d", total, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}
