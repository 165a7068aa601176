package apiserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/setpoint-dev/setpoint/internal/testserver"
)

// BenchmarkCRDServed measures the time from creating a CRD (the POST
// returning) to its resource answering a list, and to the CRD reporting
// Established, on one API server with memory storage. Every iteration
// creates a new CRD, so later iterations also pay for a larger OpenAPI
// document.
func BenchmarkCRDServed(b *testing.B) {
	s := testserver.Start(b, testserver.Options{})
	var served, established time.Duration
	b.ResetTimer()
	for i := range b.N {
		group := "bench" + strconv.Itoa(i) + ".example.com"
		crd := strings.NewReplacer("widgets.example.com", "widgets."+group, `"group": "example.com"`, `"group": "`+group+`"`).Replace(widgetCRD)
		start := time.Now()
		if code, body, _ := s.Do(b, http.MethodPost, crdPath, "application/json", strings.NewReader(crd)); code != http.StatusCreated {
			b.Fatalf("create: %d %s", code, body)
		}
		for {
			code, _, _ := s.Do(b, http.MethodGet, "/apis/"+group+"/v1/widgets", "", nil)
			if code == http.StatusOK {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		served += time.Since(start)
		for {
			_, body, _ := s.Do(b, http.MethodGet, crdPath+"/widgets."+group, "", nil)
			if strings.Contains(string(body), `"type":"Established","status":"True"`) {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		established += time.Since(start)
	}
	b.ReportMetric(float64(served.Microseconds())/1000/float64(b.N), "ms-to-served")
	b.ReportMetric(float64(established.Microseconds())/1000/float64(b.N), "ms-to-established")
}
