package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/tcpproxy"
	"github.com/setpoint-dev/setpoint/reflector"
	"github.com/setpoint-dev/setpoint/rest"
)

// TestConsistencyUnderChaos runs informers of ConfigMaps and of Nodes
// (cluster-scoped) against a real server on bolt storage, reached through
// a TCP proxy, while a random driver writes objects directly to the server,
// cuts the proxy's connections, takes it down for outages, forces 410 Gone
// (more writes than the server's watch window while the informers are cut
// off, then a storage compaction), restarts the server on its data, and
// steps the resync clock. Each informer has two handlers, one with a resync
// period. It checks:
//
//   - per object, every handler is handed states in the server's order
//     (the journal rules: adds and updates never go back, updates carry the
//     state last handed as oldObj, deletions carry the last state or a
//     newer one);
//   - whenever the driver pauses, the cache and what each handler was last
//     handed equal the server's list exactly (names, resourceVersions,
//     content); objects gone from the server were last handed as deletions;
//   - an object deleted while the informer's watch position was lost reaches
//     both handlers as OnDelete(last handed state, finalStateUnknown=true);
//   - a resync replays the whole cache to the handler that asked for it,
//     and nothing to the other;
//   - both handlers were handed the same notifications, resyncs aside.
//
// Seeds are random; a failing subtest logs its seed and recent operations.
// SETPOINT_SEED=<n> reruns one seed, SETPOINT_CONSISTENCY_SEEDS=<n> runs n
// (default 8, fresh ones on every run, 4 with -short), in parallel.
func TestConsistencyUnderChaos(t *testing.T) {
	for _, seed := range chaosSeeds(t) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel() // each seed has its own server, proxy and informers
			runChaos(t, seed)
		})
	}
}

// chaosSteps is the number of driver steps per seed.
const chaosSteps = 40

func chaosSeeds(t *testing.T) []uint64 {
	if v := os.Getenv("SETPOINT_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SETPOINT_SEED=%q: %v", v, err)
		}
		return []uint64{seed}
	}
	n := 8
	if testing.Short() {
		n = 4
	}
	if v := os.Getenv("SETPOINT_CONSISTENCY_SEEDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("SETPOINT_CONSISTENCY_SEEDS=%q: %v", v, err)
		}
	}
	seeds := make([]uint64, n)
	for k := range seeds {
		seeds[k] = rand.Uint64()
	}
	return seeds
}

// chaosRun is one seed's world: the server, the proxy the informers go
// through, the subjects, and the trace of what the driver did.
type chaosRun struct {
	t        *testing.T
	rnd      *rand.Rand
	srv      *chaosServer
	proxy    *tcpproxy.Proxy
	subjects []chaosSubject
	// direct is the writers' client of the running server.
	direct *rest.Client
	trace  []string
}

func runChaos(t *testing.T, seed uint64) {
	r := &chaosRun{t: t, rnd: rand.New(rand.NewPCG(seed, 0x5e7901))}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("rerun with SETPOINT_SEED=%d; the operations were:\n%s", seed, strings.Join(r.trace, "\n"))
		}
	})
	r.srv = startChaosServer(t)
	r.proxy = tcpproxy.New(t, r.srv.addr())
	viaProxy := r.srv.proxiedClient(r.proxy)
	watchList := r.rnd.IntN(2) == 0
	ropts := reflector.Options{
		WatchList: &watchList, PageSize: []int64{0, 3}[r.rnd.IntN(2)], Logger: quietLogger(),
		Backoff: reflector.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond},
	}
	r.log("streaming lists %v, page size %d", watchList, ropts.PageSize)
	r.subjects = []chaosSubject{
		newSubject(t, chaosConfigMaps, viaProxy, ropts),
		newSubject(t, chaosNodes, viaProxy, ropts),
	}
	r.connect()
	for range r.rnd.IntN(6) {
		r.write()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range r.subjects {
		wg.Go(func() { s.run(ctx) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for range chaosSteps {
		r.step()
		if t.Failed() {
			return
		}
	}
	r.quiesce()
	for _, s := range r.subjects {
		s.finish()
	}
}

func (r *chaosRun) log(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
}

func (r *chaosRun) connect() {
	r.direct = r.srv.directClient()
	for _, s := range r.subjects {
		s.connect(r.direct)
	}
}

func (r *chaosRun) step() {
	switch p := r.rnd.IntN(100); {
	case p < 55:
		r.write()
	case p < 66:
		r.proxy.Drop()
		r.log("cut the connections")
	case p < 76:
		r.outage()
	case p < 84:
		r.forceGone()
	case p < 89:
		r.restart()
	case p < 95:
		r.quiesce()
		for _, s := range r.subjects {
			s.resync()
		}
		r.log("resync")
	default:
		r.quiesce()
	}
}

// write makes one random change to a random subject.
func (r *chaosRun) write() {
	s := r.subjects[r.rnd.IntN(len(r.subjects))]
	r.log("%s", s.write(r.rnd))
}

// writes makes up to n random changes.
func (r *chaosRun) writes(n int) {
	for range r.rnd.IntN(n + 1) {
		r.write()
	}
}

func (r *chaosRun) quiesce() {
	r.t.Helper()
	for _, s := range r.subjects {
		s.quiesce()
	}
	r.log("quiescent: cache and handlers equal the server")
}

// outage takes the proxy down for a few writes; the informers may or may
// not be able to resume their watches afterwards.
func (r *chaosRun) outage() {
	r.proxy.SetDown(true)
	r.log("proxy down")
	r.writes(chaosWindow + 2)
	r.proxy.SetDown(false)
	r.log("proxy up")
}

// forceGone makes the informers' watch positions unavailable: while they
// are cut off, every resource gets more writes than the watch window
// holds, and storage is compacted.
func (r *chaosRun) forceGone() {
	r.quiesce()
	r.begin()
	r.proxy.SetDown(true)
	r.log("proxy down, forcing 410")
	r.writes(4)
	for _, s := range r.subjects {
		s.churn(chaosWindow + 1)
	}
	if err := r.srv.compact(); err != nil {
		r.t.Fatal(err)
	}
	r.settle()
	r.proxy.SetDown(false)
	r.log("compacted; proxy up")
	r.end()
}

// restart stops the server while the informers are cut off and starts it
// again on its data; the restarted watch cache has no history before the
// restart, and each resource was written after the informers lost contact,
// so every watch position is unavailable.
func (r *chaosRun) restart() {
	r.quiesce()
	r.begin()
	r.proxy.SetDown(true)
	r.log("proxy down, restarting the server")
	r.writes(3)
	for _, s := range r.subjects {
		s.churn(1)
	}
	r.direct.CloseIdleConnections()
	r.srv.restart()
	r.connect()
	r.writes(3)
	if r.rnd.IntN(2) == 0 {
		if err := r.srv.compact(); err != nil {
			r.t.Fatal(err)
		}
		r.log("compacted")
	}
	r.settle()
	r.proxy.SetTarget(r.srv.addr())
	r.proxy.SetDown(false)
	r.log("server restarted; proxy up")
	r.end()
}

// settle waits until the server's watch caches hold every write made so
// far (a consistent list waits for that), so that the informers, when they
// reconnect, find the watch window already moved past their position.
func (r *chaosRun) settle() {
	r.t.Helper()
	for _, s := range r.subjects {
		s.settle()
	}
}

func (r *chaosRun) begin() {
	for _, s := range r.subjects {
		s.beginLost()
	}
}

func (r *chaosRun) end() {
	r.t.Helper()
	r.quiesce()
	for _, s := range r.subjects {
		s.endLost()
	}
}
