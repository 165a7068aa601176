package apiserver_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apfflood"
	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// floodWorkers is the flooding client's concurrency: more than one flow
// of workload-low may hold (its seat, plus handSize 6 × queueLengthLimit 50
// queued), so part of the flood is refused as its queues are full, however
// fast the server serves; and more than the tenant's requests by far.
const floodWorkers = 400

// ownClient gives an identity a connection of its own, as separate
// clients have (one HTTP/2 connection shared with the flood would put the
// flood's frames ahead of the tenant's in the client, not the server).
func ownClient(id identity) identity {
	tr := id.s.Client.Transport.(*http.Transport).Clone()
	s := *id.s
	s.Client = &http.Client{Transport: tr}
	return identity{&s, id.token}
}

// interleaved times n rounds of a then b (alternating, so that both see
// the same moments of the machine) and returns each one's sorted times
// and failures.
func interleaved(t testing.TB, n int, pace time.Duration, a, b func() int) (sa, sb []time.Duration, failures [2]int) {
	t.Helper()
	for range n {
		for i, op := range []func() int{a, b} {
			begin := time.Now()
			if code := op(); code != http.StatusOK {
				failures[i]++
			}
			if i == 0 {
				sa = append(sa, time.Since(begin))
			} else {
				sb = append(sb, time.Since(begin))
			}
		}
		time.Sleep(pace)
	}
	slices.Sort(sa)
	slices.Sort(sb)
	return sa, sb, failures
}

func p99(sorted []time.Duration) time.Duration { return sorted[(len(sorted)*99)/100] }
func p50(sorted []time.Duration) time.Duration { return sorted[len(sorted)/2] }

// floodSetup makes the flooding ServiceAccount (with objects to list),
// the second tenant's ServiceAccount and a leader-election Lease renewed
// by a kube-system ServiceAccount (matched by system-leader-election).
func floodSetup(t testing.TB, s *testserver.Server) (flooder, tenant, elector identity) {
	admin := identity{s, s.Token}
	flooder, tenant = serviceAccount(t, s, "flood", "flooder"), serviceAccount(t, s, "tenant", "app")
	elector = serviceAccount(t, s, "kube-system", "elector")
	for i := range 20 {
		admin.do(t, http.MethodPost, "/api/v1/namespaces/flood/configmaps",
			fmt.Sprintf(`{"metadata":{"name":"cm-%d"},"data":{"k":"%0200d"}}`, i, i))
	}
	admin.do(t, http.MethodPost, "/api/v1/namespaces/tenant/configmaps", `{"metadata":{"name":"own"},"data":{"k":"v"}}`)
	if code, body, _ := admin.do(t, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
		`{"metadata":{"name":"flood-test"},"spec":{"holderIdentity":"elector","leaseDurationSeconds":15}}`); code != http.StatusCreated {
		t.Fatalf("create lease: %d %s", code, body)
	}
	return ownClient(flooder), ownClient(tenant), ownClient(elector)
}

// renew is one leader-election renewal: read the Lease, write it back
// with a new renewTime.
func renew(t testing.TB, elector identity) int {
	code, body, _ := elector.do(t, http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/flood-test", "")
	if code != http.StatusOK {
		return code
	}
	rv := between(body, `"resourceVersion":"`, `"`)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	code, _, _ = elector.do(t, http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/flood-test",
		fmt.Sprintf(`{"metadata":{"name":"flood-test","resourceVersion":%q},"spec":{"holderIdentity":"elector","leaseDurationSeconds":15,"renewTime":%q}}`, rv, now))
	return code
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// floodResult is what one flood run measured.
type floodResult struct {
	counts                      apfflood.Counts
	quietRead, quietElect       []time.Duration // sorted
	floodRead, floodElect       []time.Duration // sorted
	readFailures, electFailures int
	leaderElectionWaits         waitCounts
}

// runFlood is the scenario: one ServiceAccount floods the server
// (floodWorkers loops of lists of 20 ConfigMaps, honouring Retry-After,
// from a process of its own at the lowest CPU priority: startFlood) while
// a second tenant (another ServiceAccount, same priority level, its own
// flow) reads its objects and a kube-system ServiceAccount renews a
// leader-election Lease; the same reads and renewals are timed before the
// flood (quiet) and during it. The server has 2 seats (1 + 1 in flight:
// seats for CPU-bound lists should not outnumber this machine's two cores)
// and a 4 s request timeout (a 1 s wait limit), so the flood overfills
// workload-low (1 seat): its loops outnumber what its flow may queue
// (handSize 6 × queueLengthLimit 50), so the queues overflow however fast
// the server is.
func runFlood(t testing.TB, samples int) floodResult {
	s, _ := start(t, func(c *apiserver.Config) {
		c.MaxReadInFlight, c.MaxMutatingInFlight, c.RequestTimeout = 1, 1, 4*time.Second
	})
	flooder, tenant, elector := floodSetup(t, s)
	const pace = 10 * time.Millisecond
	read := func() int {
		code, _, _ := tenant.do(t, http.MethodGet, "/api/v1/namespaces/tenant/configmaps/own", "")
		return code
	}
	elect := func() int { return renew(t, elector) }

	var r floodResult
	r.quietRead, r.quietElect, _ = interleaved(t, samples, pace, read, elect)
	stop := startFlood(t, floodOrder{Kubeconfig: s.Kubeconfig, Token: flooder.token,
		Path: "/api/v1/namespaces/flood/configmaps", Workers: floodWorkers})
	var failures [2]int
	r.floodRead, r.floodElect, failures = interleaved(t, samples, pace, read, elect)
	r.counts = stop()
	r.readFailures, r.electFailures = failures[0], failures[1]
	r.leaderElectionWaits = leaderElectionWaits(t, s)
	return r
}

func (r floodResult) log(t testing.TB) {
	t.Logf("flood: %d served, %d refused with 429, %d other", r.counts.OK, r.counts.Rejected, r.counts.Other)
	t.Logf("tenant read:   quiet p50 %v p99 %v; flooded p50 %v p99 %v max %v (%d failures)",
		p50(r.quietRead), p99(r.quietRead), p50(r.floodRead), p99(r.floodRead), r.floodRead[len(r.floodRead)-1], r.readFailures)
	t.Logf("lease renewal: quiet p50 %v p99 %v; flooded p50 %v p99 %v (%d failures)",
		p50(r.quietElect), p99(r.quietElect), p50(r.floodElect), p99(r.floodElect), r.electFailures)
}

// TestPriorityAndFairnessFlood checks what does not depend on the
// machine's speed: the flood gets 429s (and some answers), the tenant and
// the renewals get no failure, and no leader-election request waits long
// in a queue. The latencies are a benchmark's
// (BenchmarkPriorityAndFairnessFlood): a timed assertion here would
// measure whatever else shares the machine.
func TestPriorityAndFairnessFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the server for several seconds")
	}
	r := runFlood(t, 100)
	r.log(t)
	if r.counts.Rejected == 0 || r.counts.OK == 0 {
		t.Errorf("the flood got %d answers and %d 429s; want both", r.counts.OK, r.counts.Rejected)
	}
	if r.readFailures > 0 || r.electFailures > 0 {
		t.Errorf("the tenant failed %d reads, the elector %d renewals", r.readFailures, r.electFailures)
	}
	if w := r.leaderElectionWaits; w.slow > 0 {
		t.Errorf("%d of %d leader-election requests waited over 0.5 s in their queue", w.slow, w.total)
	}
}

// BenchmarkPriorityAndFairnessFlood reports the figures: the p99
// of the tenant's reads and of the lease renewals, quiet and under the
// flood, and their ratios (the issue asks for at most 2). Run it on a
// quiet machine:
//
//	go test -run '^$' -bench PriorityAndFairnessFlood -benchtime 1x -count 3 ./internal/apiserver/
func BenchmarkPriorityAndFairnessFlood(b *testing.B) {
	for b.Loop() {
		r := runFlood(b, 300)
		r.log(b)
		if r.readFailures > 0 || r.electFailures > 0 || r.counts.Rejected == 0 {
			b.Fatalf("failures: tenant %d, elector %d; flood 429s %d", r.readFailures, r.electFailures, r.counts.Rejected)
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(p99(r.quietRead)), "tenant-quiet-p99-ms")
		b.ReportMetric(ms(p99(r.floodRead)), "tenant-flood-p99-ms")
		b.ReportMetric(ms(p99(r.floodRead))/ms(p99(r.quietRead)), "tenant-p99-ratio")
		b.ReportMetric(ms(p99(r.quietElect)), "lease-quiet-p99-ms")
		b.ReportMetric(ms(p99(r.floodElect)), "lease-flood-p99-ms")
		b.ReportMetric(ms(p99(r.floodElect))/ms(p99(r.quietElect)), "lease-p99-ratio")
		b.ReportMetric(float64(r.counts.Rejected), "flood-429s")
	}
}

type waitCounts struct{ slow, total int64 }

// leaderElectionWaits reads the queue waits of the leader-election level
// from the metrics: how many waited longer than 0.5 s, of how many.
func leaderElectionWaits(t testing.TB, s *testserver.Server) waitCounts {
	var w waitCounts
	prefix := `apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="system-leader-election",priority_level="leader-election",le="`
	var fast int64
	for _, line := range strings.Split(metricsText(t, s), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		le, count, _ := strings.Cut(rest, `"} `)
		n, _ := strconv.ParseInt(count, 10, 64)
		switch le {
		case "0.5":
			fast = n
		case "+Inf":
			w.total = n
		}
	}
	if w.total == 0 {
		t.Error("no leader-election request in the metrics")
	}
	w.slow = w.total - fast
	return w
}
