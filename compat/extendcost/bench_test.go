package extendcost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/setpoint-dev/setpoint/compat/procstat"
	"github.com/setpoint-dev/setpoint/compat/refcluster"
	"github.com/setpoint-dev/setpoint/internal/celbench"
	"github.com/setpoint-dev/setpoint/internal/testwait"
	"github.com/setpoint-dev/setpoint/internal/webhookclient/webhooktest"
)

// cluster is a reference cluster of the benchmark's own and its admin
// client.
type cluster struct {
	c      *refcluster.Cluster
	client *http.Client
}

func start(b *testing.B) *cluster {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := refcluster.Start(ctx, refcluster.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Stop(); err != nil {
			b.Error(err)
		}
	})
	return &cluster{c: c, client: c.HTTPClient()}
}

// do sends a JSON request and returns the code and body.
func (c *cluster) do(b *testing.B, method, path, body string) (int, string) {
	b.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.c.URL()+path, r)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		b.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func (c *cluster) must(b *testing.B, code int, method, path, body string) {
	b.Helper()
	if got, out := c.do(b, method, path, body); got != code {
		b.Fatalf("%s %s: %d %s, want %d", method, path, got, out, code)
	}
}

// serverCPU is the CPU time etcd and kube-apiserver have used.
func (c *cluster) serverCPU(b *testing.B) time.Duration {
	b.Helper()
	var total time.Duration
	for _, p := range c.c.Processes() {
		s, err := procstat.Read(p.PID)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Duration(s.CPUSeconds * float64(time.Second))
	}
	return total
}

// BenchmarkReferenceCELRules: see the package comment.
func BenchmarkReferenceCELRules(b *testing.B) {
	const creates, block = 2000, 500
	c := start(b)
	plain, ruled := "plain.bench.example.com", "ruled.bench.example.com"
	for group, rules := range map[string]string{plain: "[]", ruled: celbench.TenRules} {
		c.must(b, http.StatusCreated, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", celbench.GadgetCRD(group, rules))
		list := "/apis/" + group + "/v1/namespaces/default/gadgets"
		testwait.Until(b, time.Minute, list+" served", func() error {
			if code, _ := c.do(b, http.MethodGet, list, ""); code != http.StatusOK {
				return testwait.ErrNotYet
			}
			return nil
		})
	}
	next := 0
	create := func(group string) time.Duration {
		next++
		begin := time.Now()
		c.must(b, http.StatusCreated, http.MethodPost, "/apis/"+group+"/v1/namespaces/default/gadgets", fmt.Sprintf(celbench.GadgetFormat, group, next))
		return time.Since(begin)
	}
	for range 200 { // warm-up: connections, caches, the first compilations
		create(plain)
		create(ruled)
	}
	b.ResetTimer()
	for range b.N {
		var without, with time.Duration
		for range creates {
			without += create(plain)
			with += create(ruled)
		}
		cpu := map[string]time.Duration{}
		for range creates / block {
			for _, g := range []string{plain, ruled} {
				before := c.serverCPU(b)
				for range block {
					create(g)
				}
				cpu[g] += c.serverCPU(b) - before
			}
		}
		b.ReportMetric(float64(without.Microseconds())/creates, "us/create-rules=0")
		b.ReportMetric(float64(with.Microseconds())/creates, "us/create-rules=10")
		b.ReportMetric(float64((with-without).Microseconds())/creates, "us-added-by-rules")
		b.ReportMetric(float64(cpu[plain].Microseconds())/creates, "server-cpu-us/create-rules=0")
		b.ReportMetric(float64(cpu[ruled].Microseconds())/creates, "server-cpu-us/create-rules=10")
	}
}

// BenchmarkReferenceWebhook: see the package comment.
func BenchmarkReferenceWebhook(b *testing.B) {
	const creates, writers = 3000, 16
	c := start(b)
	var calls atomic.Int64
	hook := webhooktest.Start(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A no-op webhook as one is written: decode the review, allow.
		body, _ := io.ReadAll(r.Body)
		review := &admissionv1.AdmissionReview{}
		if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	c.must(b, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", `{"metadata":{"name":"wh","labels":{"webhook-test":"yes"}}}`)
	seq := 0
	run := func() (p50, p99 float64) {
		lat := make([]time.Duration, creates)
		var next atomic.Int64
		var wg sync.WaitGroup
		base := seq
		seq += creates
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < creates; i = int(next.Add(1)) - 1 {
					body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"},"data":{"k":"v"}}`, base+i)
					begin := time.Now()
					req, _ := http.NewRequest(http.MethodPost, c.c.URL()+"/api/v1/namespaces/wh/configmaps", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					resp, err := c.client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					lat[i] = time.Since(begin)
					if resp.StatusCode != http.StatusCreated {
						b.Errorf("create: %d", resp.StatusCode)
						return
					}
				}
			}()
		}
		wg.Wait()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		return pct(0.50), pct(0.99)
	}
	run() // warm-up
	b.ResetTimer()
	for range b.N {
		p50, p99 := run()
		caJSON, _ := json.Marshal(hook.CABundle)
		c.must(b, http.StatusCreated, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"bench"},"webhooks":[
			{"name":"noop.example.com","clientConfig":{"url":"`+hook.URL+`/noop","caBundle":`+string(caJSON)+`},
			 "rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
			 "namespaceSelector":{"matchLabels":{"webhook-test":"yes"}},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`)
		testwait.Until(b, time.Minute, "webhook called", func() error {
			if calls.Load() > 0 {
				return nil
			}
			c.do(b, http.MethodPost, "/api/v1/namespaces/wh/configmaps?dryRun=All", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe"}}`)
			return testwait.ErrNotYet
		})
		before := calls.Load()
		hp50, hp99 := run()
		if n := calls.Load() - before; n < creates {
			b.Fatalf("webhook called %d times for %d creates", n, creates)
		}
		c.must(b, http.StatusOK, http.MethodDelete, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/bench", "")
		testwait.Until(b, time.Minute, "webhook no longer called", func() error {
			n := calls.Load()
			c.do(b, http.MethodPost, "/api/v1/namespaces/wh/configmaps?dryRun=All", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe"}}`)
			if calls.Load() == n {
				return nil
			}
			return testwait.ErrNotYet
		})
		b.ReportMetric(p50, "p50-ms-without")
		b.ReportMetric(p99, "p99-ms-without")
		b.ReportMetric(hp50, "p50-ms-with")
		b.ReportMetric(hp99, "p99-ms-with")
		b.ReportMetric(hp99-p99, "p99-ms-added")
	}
}
