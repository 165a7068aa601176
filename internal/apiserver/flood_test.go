package apiserver_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/apiserver"
	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// quietFloor is the least quiet p99 the flooded p99 is compared with:
// below it a p99 of a loopback request measures the machine's timer and
// scheduler (a Go GC pause, a preempted thread), not the server.
const quietFloor = 5 * time.Millisecond

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
func interleaved(t *testing.T, n int, pace time.Duration, a, b func() int) (sa, sb []time.Duration, failures [2]int) {
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
func p90(sorted []time.Duration) time.Duration { return sorted[(len(sorted)*90)/100] }
func p50(sorted []time.Duration) time.Duration { return sorted[len(sorted)/2] }

// floodSetup makes the flooding ServiceAccount (with objects to list),
// the second tenant's ServiceAccount and a leader-election Lease renewed
// by a kube-system ServiceAccount (matched by system-leader-election).
func floodSetup(t *testing.T, s *testserver.Server) (flooder, tenant, elector identity) {
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
func renew(t *testing.T, elector identity) int {
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

// TestPriorityAndFairnessFlood is the check: one ServiceAccount
// floods the server (floodWorkers loops of lists of 20 ConfigMaps,
// honouring Retry-After, from a process of its own at the lowest CPU
// priority: startFlood) while a second tenant (another ServiceAccount,
// same priority level, its own flow) reads its objects and a kube-system
// ServiceAccount renews a leader-election Lease. The server has 2 seats
// (1 + 1 in flight: seats for CPU-bound lists should not outnumber this
// machine's two cores) and a 4 s request timeout (a 1 s wait limit), so
// the flood overfills workload-low (1 seat): its loops outnumber what its
// flow may queue (handSize 6 × queueLengthLimit 50), so the queues
// overflow however fast the server is. The flood must get 429s; the tenant
// and the renewals none; no renewal waits long in a queue; and the p99 of
// the tenant's reads and of the renewals stays within twice their quiet
// p99 (measured the same way just before, floored at quietFloor: below it
// a p99 measures the machine's timer and scheduler, not the server).
func TestPriorityAndFairnessFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the server for several seconds")
	}
	s, _ := start(t, func(c *apiserver.Config) {
		c.MaxReadInFlight, c.MaxMutatingInFlight, c.RequestTimeout = 1, 1, 4*time.Second
	})
	flooder, tenant, elector := floodSetup(t, s)
	const samples, pace = 200, 10 * time.Millisecond
	read := func() int {
		code, _, _ := tenant.do(t, http.MethodGet, "/api/v1/namespaces/tenant/configmaps/own", "")
		return code
	}
	elect := func() int { return renew(t, elector) }

	quietRead, quietElect, _ := interleaved(t, samples, pace, read, elect)
	stop := startFlood(t, floodOrder{Kubeconfig: s.Kubeconfig, Token: flooder.token,
		Path: "/api/v1/namespaces/flood/configmaps", Workers: floodWorkers})
	floodRead, floodElect, failures := interleaved(t, samples, pace, read, elect)
	counts := stop()
	readFailures, electFailures := failures[0], failures[1]

	t.Logf("flood: %d served, %d refused with 429, %d other", counts.OK, counts.Rejected, counts.Other)
	t.Logf("tenant read:   quiet p50 %v p90 %v p99 %v; flooded p50 %v p90 %v p99 %v max %v (%d failures)",
		p50(quietRead), p90(quietRead), p99(quietRead), p50(floodRead), p90(floodRead), p99(floodRead), floodRead[len(floodRead)-1], readFailures)
	t.Logf("lease renewal: quiet p50 %v p99 %v; flooded p50 %v p99 %v (%d failures)",
		p50(quietElect), p99(quietElect), p50(floodElect), p99(floodElect), electFailures)
	if counts.Rejected == 0 || counts.OK == 0 {
		t.Errorf("the flood got %d answers and %d 429s; want both", counts.OK, counts.Rejected)
	}
	if readFailures > 0 || electFailures > 0 {
		t.Errorf("the tenant failed %d reads, the elector %d renewals", readFailures, electFailures)
	}
	if waits := leaderElectionWaits(t, s); waits.slow > 0 {
		t.Errorf("%d of %d leader-election requests waited over 0.5 s in their queue", waits.slow, waits.total)
	}
	for _, c := range []struct {
		what         string
		quiet, flood time.Duration
	}{{"tenant read", p99(quietRead), p99(floodRead)}, {"lease renewal", p99(quietElect), p99(floodElect)}} {
		if bound := 2 * max(c.quiet, quietFloor); c.flood > bound {
			t.Errorf("%s p99 %v under the flood, beyond twice the quiet p99 %v (floored at %v)", c.what, c.flood, c.quiet, quietFloor)
		}
	}
}

type waitCounts struct{ slow, total int64 }

// leaderElectionWaits reads the queue waits of the leader-election level
// from the metrics: how many waited longer than 0.5 s, of how many.
func leaderElectionWaits(t *testing.T, s *testserver.Server) waitCounts {
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
