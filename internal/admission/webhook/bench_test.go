package webhook_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
	"github.com/setpoint-dev/setpoint/internal/testwait"
)

// BenchmarkCreateWithValidatingWebhook measures what a no-op validating
// webhook on loopback adds to a create under 16 concurrent writers: the
// same server, without and then with the webhook, in one run. It reports
// the p50 and p99 latency of a create (ms) of each.
func BenchmarkCreateWithValidatingWebhook(b *testing.B) {
	s := testserver.Start(b, testserver.Options{})
	req, err := http.NewRequest("POST", s.URL+"/api/v1/namespaces", strings.NewReader(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"wh","labels":{"webhook-test":"yes"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := s.Client.Do(req); err != nil || resp.StatusCode != 201 {
		b.Fatalf("namespace: %v", err)
	}
	hs := startHooks(b, map[string]answer{"/noop": allow})
	var seq atomic.Int64
	b.Run("without", func(b *testing.B) { creates(b, s, &seq) })
	hook := webhookJSON("noop.example.com", hs.URL+"/noop", hs.CABundle, "")
	body := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"bench"},"webhooks":[` + hook + `]}`
	code, out, _ := s.Do(b, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "application/json", strings.NewReader(body))
	if code != 201 {
		b.Fatalf("webhook configuration: %d %s", code, out)
	}
	testwait.UntilEvery(b, 10*time.Second, 20*time.Millisecond, "webhook called", func() error {
		if len(hs.got("/noop")) > 0 {
			return nil
		}
		s.Do(b, "POST", cms+"?dryRun=All", "application/json", strings.NewReader(configMap("probe", "")))
		return testwait.ErrNotYet
	})
	b.Run("with", func(b *testing.B) {
		before := len(hs.got("/noop"))
		creates(b, s, &seq)
		if n := len(hs.got("/noop")) - before; n < b.N {
			b.Fatalf("webhook called %d times for %d creates", n, b.N)
		}
		// The call itself, as the plugin's histogram saw it (all calls of
		// the run, probes included): the share under 5 ms and 25 ms.
		_, m, _ := s.Do(b, "GET", "/metrics", "", nil)
		le5, le25, all := bucket(string(m), "0.005"), bucket(string(m), "0.025"), bucket(string(m), "+Inf")
		if all > 0 {
			b.ReportMetric(100*le5/all, "%calls<5ms")
			b.ReportMetric(100*le25/all, "%calls<25ms")
		}
	})
}

// bucket reads the cumulative count of the noop webhook's duration
// histogram at le.
func bucket(metrics, le string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds_bucket{") &&
			strings.Contains(line, `name="noop.example.com"`) && strings.Contains(line, `operation="CREATE"`) &&
			strings.Contains(line, `le="`+le+`"`) {
			var v float64
			fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%g", &v)
			return v
		}
	}
	return 0
}

// creates runs b.N creates of ConfigMaps from 16 writers and reports the
// latency percentiles.
func creates(b *testing.B, s *testserver.Server, seq *atomic.Int64) {
	const writers = 16
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				name := fmt.Sprintf("cm-%d", seq.Add(1))
				req, _ := http.NewRequest("POST", s.URL+cms, strings.NewReader(configMap(name, "")))
				req.Header.Set("Authorization", "Bearer "+s.Token)
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				resp, err := s.Client.Do(req)
				lat[i] = time.Since(start)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 201 {
					b.Errorf("create: %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
